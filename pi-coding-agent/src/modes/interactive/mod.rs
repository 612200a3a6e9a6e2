//! The interactive mode of `pi` (a terminal UI on pi-tui over `AgentSession`).
