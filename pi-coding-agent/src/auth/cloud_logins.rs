//! The API-key logins of Amazon Bedrock and Google Vertex AI as pi-ai has them: each asks which
//! credential source to use, then stores what that source needs in auth.json (a bearer token or
//! API key as the credential's `key`; an AWS profile, or Google Cloud's project, location and
//! credentials file, in its `env`; nothing for the ambient AWS credential chain).

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::credential::Credential;
use super::login::{
    AuthEvent, AuthInfoLink, AuthInteraction, AuthOption, AuthPrompt, LoginError, LoginKind, LoginProvider,
};

fn option(id: &str, label: &str) -> AuthOption {
    AuthOption { id: id.into(), label: label.into(), description: None }
}

fn text(message: &str) -> AuthPrompt {
    AuthPrompt::Text { message: message.into(), placeholder: None }
}

fn secret(message: &str) -> AuthPrompt {
    AuthPrompt::Secret { message: message.into(), placeholder: None }
}

/// `{"type":"api_key"}` with these `env` entries (none: no `env`).
fn env_credential(entries: Vec<(&str, String)>) -> Credential {
    let mut map = Map::new();
    map.insert("type".into(), "api_key".into());
    if !entries.is_empty() {
        let env: Map<String, Value> = entries.into_iter().map(|(k, v)| (k.to_owned(), Value::String(v))).collect();
        map.insert("env".into(), Value::Object(env));
    }
    Credential::from_json(map)
}

fn check(interaction: &dyn AuthInteraction) -> Result<(), LoginError> {
    if interaction.cancel().is_cancelled() { Err(LoginError::Cancelled) } else { Ok(()) }
}

/// Amazon Bedrock's login (pi-ai's `bedrockAuth`, "AWS credentials or bearer token").
#[derive(Clone, Copy, Debug, Default)]
pub struct BedrockLogin;

#[async_trait]
impl LoginProvider for BedrockLogin {
    fn provider_id(&self) -> &str {
        "amazon-bedrock"
    }

    fn name(&self) -> &str {
        "AWS credentials or bearer token"
    }

    fn kind(&self) -> LoginKind {
        LoginKind::ApiKey
    }

    async fn login(&self, interaction: &dyn AuthInteraction) -> Result<Credential, LoginError> {
        check(interaction)?;
        let method = interaction
            .prompt(AuthPrompt::Select {
                message: "Select Amazon Bedrock authentication method:".into(),
                options: vec![
                    option("bearer-token", "Bearer token"),
                    option("aws-profile", "AWS profile"),
                    option("credential-chain", "Existing AWS credential chain"),
                ],
            })
            .await?;
        check(interaction)?;
        if method == "bearer-token" {
            return Ok(Credential::api_key(interaction.prompt(secret("Enter Amazon Bedrock bearer token")).await?));
        }
        interaction.notify(AuthEvent::Info {
            message: "Amazon Bedrock supports AWS profiles, IAM credentials, and role-based credentials.".into(),
            links: vec![AuthInfoLink {
                url: "https://docs.aws.amazon.com/sdkref/latest/guide/standardized-credentials.html".into(),
                label: Some("AWS credential provider chain".into()),
            }],
        });
        match method.as_str() {
            "aws-profile" => {
                let profile = interaction.prompt(text("Enter AWS profile name")).await?;
                Ok(env_credential(vec![("AWS_PROFILE", profile)]))
            }
            "credential-chain" => {
                interaction.prompt(text("Configure AWS credentials, then press Enter to continue")).await?;
                Ok(env_credential(Vec::new()))
            }
            other => Err(LoginError::Failed(format!("Unknown Amazon Bedrock auth method: {other}"))),
        }
    }
}

/// Google Vertex AI's login (pi-ai's `vertexAuth`, "Google Cloud credentials").
#[derive(Clone, Copy, Debug, Default)]
pub struct VertexLogin;

#[async_trait]
impl LoginProvider for VertexLogin {
    fn provider_id(&self) -> &str {
        "google-vertex"
    }

    fn name(&self) -> &str {
        "Google Cloud credentials"
    }

    fn kind(&self) -> LoginKind {
        LoginKind::ApiKey
    }

    async fn login(&self, interaction: &dyn AuthInteraction) -> Result<Credential, LoginError> {
        check(interaction)?;
        let method = interaction
            .prompt(AuthPrompt::Select {
                message: "Select Google Vertex AI authentication method:".into(),
                options: vec![
                    option("api-key", "Google Cloud API key"),
                    option("adc", "Application Default Credentials"),
                    option("service-account", "Service account credentials file"),
                ],
            })
            .await?;
        check(interaction)?;
        if method == "api-key" {
            return Ok(Credential::api_key(interaction.prompt(secret("Enter Google Cloud API key")).await?));
        }
        if method != "adc" && method != "service-account" {
            return Err(LoginError::Failed(format!("Unknown Google Vertex AI auth method: {method}")));
        }
        let message = if method == "adc" {
            "Run `gcloud auth application-default login`, then provide the project and location."
        } else {
            "Provide a service account credentials file, project, and location."
        };
        interaction.notify(AuthEvent::Info {
            message: message.into(),
            links: vec![AuthInfoLink {
                url: "https://cloud.google.com/docs/authentication/provide-credentials-adc".into(),
                label: Some("Application Default Credentials".into()),
            }],
        });
        let project = interaction.prompt(text("Enter Google Cloud project ID")).await?;
        let location = interaction.prompt(text("Enter Google Cloud location")).await?;
        let mut env = vec![("GOOGLE_CLOUD_PROJECT", project), ("GOOGLE_CLOUD_LOCATION", location)];
        if method == "service-account" {
            env.push((
                "GOOGLE_APPLICATION_CREDENTIALS",
                interaction.prompt(text("Enter service account credentials file path")).await?,
            ));
        }
        Ok(env_credential(env))
    }
}
