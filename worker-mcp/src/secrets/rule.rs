//! The fixed set of rules the scanner applies, each named by a stable id.
//!
//! The token formats are written from each issuer's documentation of its own token layout
//! (fixed prefixes, alphabets and lengths), so a match is rarely anything but a credential; the
//! two heuristic rules (a secret-named assignment of a high-entropy value, a password in a
//! URL) carry their own false-positive guards (see `value.rs`).

/// One kind of secret the scanner recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    /// A file whose name says it holds credentials (`.env`, `id_rsa`, `*.pem`, …).
    CredentialFileName,
    /// A PEM/OpenSSH/PGP private key block (header and key material), or a PuTTY key file.
    PrivateKey,
    /// An AWS access key id (`AKIA…`, `ASIA…`, 20 characters).
    AwsAccessKeyId,
    /// A GitHub token (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`).
    GithubToken,
    /// A GitLab token (`glpat-`, `gldt-`, `glrt-`, `glptt-`, `glcbt-`, `glsoat-`, …).
    GitlabToken,
    /// A Slack token (`xoxb-`, `xoxp-`, `xapp-`, …) or incoming-webhook URL.
    SlackToken,
    /// A Stripe secret or restricted key (`sk_live_`, `rk_test_`, …) or webhook secret.
    StripeKey,
    /// An OpenAI API key (`sk-proj-`, `sk-svcacct-`, `sk-admin-`, or the `T3BlbkFJ` marker).
    OpenaiApiKey,
    /// An Anthropic API key (`sk-ant-api03-…`, `sk-ant-admin01-…`).
    AnthropicApiKey,
    /// A Google API key (`AIza…`, 39 characters) or OAuth client secret (`GOCSPX-…`).
    GoogleApiKey,
    /// A signed JSON Web Token (`eyJ….eyJ….<signature>`).
    Jwt,
    /// An npm access token (`npm_…`).
    NpmToken,
    /// A PyPI upload token (`pypi-AgEIcHlwaS5vcmc…`).
    PypiToken,
    /// A Hugging Face access token (`hf_…`).
    HuggingfaceToken,
    /// A SendGrid API key (`SG.<22>.<43>`).
    SendgridApiKey,
    /// A DigitalOcean token (`dop_v1_`, `doo_v1_`, `dor_v1_`).
    DigitaloceanToken,
    /// A password inside a URL (`scheme://user:password@host`).
    PasswordInUrl,
    /// A secret-named setting (`API_KEY=…`, `"password": "…"`) with a high-entropy value.
    SecretAssignment,
    /// The issue-tracker token Butler itself holds.
    ButlerTrackerToken,
}

impl Rule {
    /// The rule's stable id, as the Brain and the user see it.
    pub fn id(self) -> &'static str {
        match self {
            Rule::CredentialFileName => "credential-file-name",
            Rule::PrivateKey => "private-key",
            Rule::AwsAccessKeyId => "aws-access-key-id",
            Rule::GithubToken => "github-token",
            Rule::GitlabToken => "gitlab-token",
            Rule::SlackToken => "slack-token",
            Rule::StripeKey => "stripe-key",
            Rule::OpenaiApiKey => "openai-api-key",
            Rule::AnthropicApiKey => "anthropic-api-key",
            Rule::GoogleApiKey => "google-api-key",
            Rule::Jwt => "jwt",
            Rule::NpmToken => "npm-token",
            Rule::PypiToken => "pypi-token",
            Rule::HuggingfaceToken => "huggingface-token",
            Rule::SendgridApiKey => "sendgrid-api-key",
            Rule::DigitaloceanToken => "digitalocean-token",
            Rule::PasswordInUrl => "password-in-url",
            Rule::SecretAssignment => "secret-assignment",
            Rule::ButlerTrackerToken => "butler-tracker-token",
        }
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

impl serde::Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}
