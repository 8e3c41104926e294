package secrets

import (
	"encoding/base64"
	"math"
	"regexp"
	"strings"
)

// rule is one detector. A rule runs only where one of its keywords occurs:
// its regexp is applied to a window of the text around the keyword hit
// (before bytes ahead of the keyword, after bytes past it), which is what
// keeps a clean prompt at a few microseconds.
//
// Patterns are ported, and adapted to RE2, from the rule sets of Nosey
// Parker (github.com/praetorian-inc/noseyparker, Apache-2.0) and gitleaks
// (github.com/zricethezav/gitleaks, MIT); the provider formats are public.
type rule struct {
	id    string
	group string
	kind  string
	// keywords are lowercase ASCII; the automaton matches them in any case.
	keywords []string
	// re finds the secret; capture group 1, when present, is the span
	// reported (the credential without its surrounding syntax).
	re *regexp.Regexp
	// match replaces re for rules that are cheaper or clearer as code. It
	// gets the window and the keyword's offsets in it, and returns the
	// secret's span in the window.
	match func(w string, ks, ke int, th float64) (int, int, bool)
	// scan replaces keywords for rules that walk the whole text once.
	scan   func(text string, th float64, r *rule, hits []hit) []hit
	before int
	after  int
	// check validates the secret found (a decodable JWT header, entropy).
	check func(secret string) bool
	// score is the confidence: 1 for self-identifying formats, lower for
	// context rules and heuristics.
	score float64
	// priority breaks overlaps: lower wins. Provider formats are 0,
	// context rules 1, heuristics 2.
	priority int
	// anchored rules start at the keyword: their window begins there and
	// their regexp is anchored, so a keyword that is not followed by a
	// secret costs one failed anchored match, not a scan of the window.
	anchored bool
	// boundary asks that the byte before the keyword is not a word byte
	// (the anchored form of a leading \b).
	boundary bool
}

// Rule group names. Config.Rules selects among them.
const (
	groupCloud      = "cloud"          // AWS, Azure, Google Cloud, DigitalOcean, Heroku, ...
	groupVCS        = "vcs"            // GitHub, GitLab, Bitbucket, package registries
	groupAI         = "ai"             // OpenAI, Anthropic, Groq, Hugging Face, ...
	groupSaaS       = "saas"           // Slack, Stripe, Twilio, SendGrid, Shopify, ...
	groupKey        = "private_key"    // PEM, OpenSSH, PGP, PuTTY, age, WireGuard
	groupJWT        = "jwt"            // JSON Web Tokens
	groupConn       = "connection"     // credentials in URIs and connection strings
	groupHTTP       = "http_auth"      // Authorization headers
	groupHash       = "password_hash"  // crypt(3), bcrypt, Kerberos AS-REP hashes
	groupInfra      = "infrastructure" // cloud resource identifiers (ARNs, bucket URLs)
	groupCredential = "credential"     // tool invocations carrying a password
	groupGeneric    = "generic"        // password/secret assignments (Config.Generic)
)

// Reusable regexp fragments. assign is the key/value separator of config
// files and code: optional closing quote, then :, =, :=, => with spaces.
const (
	assign  = `["'\x60]?\s{0,10}(?::=|=>|==|!=|=|:)\s{0,10}\\?["'\x60]?`
	sepWS   = `["'\x60]?\s{0,10}(?::=|=>|=|:|\s)\s{0,10}\\?["'\x60]?`
	uuid    = `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`
	endTok  = `(?:[^A-Za-z0-9_-]|$)`
	endB64  = `(?:[^A-Za-z0-9+/=]|$)`
	ident20 = `[\w.-]{0,30}`
)

func re(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// prefix builds a rule for a token that starts with a literal keyword:
// the window starts one byte before the keyword (for \b) and spans maxLen.
func prefix(id, group, kind string, kw []string, pattern string, maxLen int) rule {
	r := rule{id: id, group: group, kind: kind, keywords: kw, after: maxLen + 1, score: 1, anchored: true}
	if p, ok := strings.CutPrefix(pattern, `\b`); ok {
		pattern, r.boundary = p, true
	}
	r.re = re("^" + pattern)
	return r
}

// ctxRule builds a rule whose keyword names the provider and precedes the
// value by up to ~60 bytes ("HEROKU_API_KEY: <uuid>").
func ctxRule(id, group, kind string, kw []string, pattern string) rule {
	return rule{id: id, group: group, kind: kind, keywords: kw, re: re("^" + pattern), after: 400, score: 0.9, priority: 1, anchored: true}
}

var rules = buildRules()

func buildRules() []rule {
	rs := []rule{
		// ---- AWS
		prefix("aws-access-key-id", groupCloud, "AWS_ACCESS_KEY_ID",
			[]string{"akia", "asia", "abia", "acca", "a3t", "agpa", "aida", "aroa", "aipa", "anpa", "anva", "apka"},
			`\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16})\b`, 22),
		ctxRule("aws-secret-access-key", groupCloud, "AWS_SECRET_ACCESS_KEY", []string{"aws", "secret_access_key", "secretaccesskey"},
			`(?i)(?:aws|secret_?access)[\w.-]{0,30}`+assign+`([A-Za-z0-9/+=]{40})`+endB64),
		ctxRule("aws-session-token", groupCloud, "AWS_SESSION_TOKEN", []string{"session_token", "sessiontoken"},
			`(?i)session_?token`+assign+`([A-Za-z0-9/+=]{100,})`),
		prefix("aws-mws-token", groupCloud, "AWS_MWS_AUTH_TOKEN", []string{"amzn.mws."}, `\b(amzn\.mws\.`+uuid+`)`, 50),
		prefix("aws-appsync-key", groupCloud, "AWS_APPSYNC_API_KEY", []string{"da2-"}, `\b(da2-[a-z0-9]{26})\b`, 31),
		// ---- Azure
		ctxRule("azure-storage-key", groupCloud, "AZURE_STORAGE_KEY", []string{"accountkey", "sharedaccesskey"},
			`(?i)(?:AccountKey|SharedAccessKey)\s*=\s*([A-Za-z0-9+/]{30,100}={0,2})`),
		ctxRule("azure-app-config", groupCloud, "AZURE_APP_CONFIG_SECRET", []string{"azconfig.io"},
			`(?i)azconfig\.io;Id=[^;\s]{4,};Secret=([A-Za-z0-9+/]{30,}={0,2})`),
		{id: "azure-devops-pat", group: groupCloud, kind: "AZURE_DEVOPS_PAT", keywords: []string{"azdo"},
			re: re(`\b([A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4})\b`), before: 77, after: 5, score: 1},
		ctxRule("azure-devops-pat-legacy", groupCloud, "AZURE_DEVOPS_PAT", []string{"pat", "personalaccesstoken", "personal_access_token", "devops"},
			`(?i)(?:pat|personal_?access_?token|devops)[\w.-]{0,30}`+assign+`([a-z2-7]{52})\b`),
		{id: "azure-ad-client-secret", group: groupCloud, kind: "AZURE_CLIENT_SECRET", keywords: []string{"q~"},
			re: re(`\b([A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})` + endTok), before: 5, after: 36, score: 1},
		// ---- Google
		prefix("google-api-key", groupCloud, "GOOGLE_API_KEY", []string{"aiza"}, `\b(AIza[0-9A-Za-z_-]{35})`, 40),
		prefix("google-oauth-secret", groupCloud, "GOOGLE_OAUTH_CLIENT_SECRET", []string{"gocspx-"}, `\b(GOCSPX-[A-Za-z0-9_-]{28})`, 36),
		prefix("google-oauth-token", groupCloud, "GOOGLE_OAUTH_ACCESS_TOKEN", []string{"ya29."}, `\b(ya29\.[0-9A-Za-z_-]{20,})`, 2048),
		{id: "google-client-id", group: groupCloud, kind: "GOOGLE_OAUTH_CLIENT_ID", keywords: []string{".apps.googleusercontent.com"},
			re: re(`\b([0-9]{6,}-[a-z0-9]{32}\.apps\.googleusercontent\.com)`), before: 48, after: 1, score: 0.6},
		ctxRule("google-client-secret-legacy", groupCloud, "GOOGLE_OAUTH_CLIENT_SECRET", []string{"client_secret", "clientsecret"},
			`(?i)client_?secret["']?\s{0,10}[:=]\s{0,10}["']([A-Za-z0-9_-]{24})["']`),
		// ---- Other clouds and hosting
		prefix("digitalocean-token", groupCloud, "DIGITALOCEAN_TOKEN", []string{"doo_v1_", "dop_v1_", "dor_v1_"}, `\b(do[opr]_v1_[0-9a-f]{64})\b`, 72),
		ctxRule("heroku-api-key", groupCloud, "HEROKU_API_KEY", []string{"heroku"}, `(?i)heroku[\w.-]{0,30}`+assign+`(`+uuid+`)\b`),
		prefix("heroku-api-key-v2", groupCloud, "HEROKU_API_KEY", []string{"hrku-"}, `\b(HRKU-[A-Za-z0-9_-]{60})`, 66),
		prefix("databricks-token", groupCloud, "DATABRICKS_TOKEN", []string{"dapi"}, `\b(dapi[0-9a-f]{32}(?:-[0-9]+)?)\b`, 40),
		prefix("doppler-token", groupCloud, "DOPPLER_TOKEN", []string{"dp."}, `\b(dp\.(?:ct|pt|sa|scim|audit|st(?:\.[a-z0-9_-]{2,35})?)\.[A-Za-z0-9]{40,44})\b`, 90),
		prefix("hashicorp-vault-token", groupCloud, "VAULT_TOKEN", []string{"hvs.", "hvb.", "hvr."}, `\b(hv[sbr]\.[A-Za-z0-9_-]{24,})`, 512),
		ctxRule("hashicorp-vault-token-legacy", groupCloud, "VAULT_TOKEN", []string{"vault"},
			`(?i)vault[\w.-]{0,30}`+sepWS+`\b([sbr]\.[A-Za-z0-9_-]{24,})`),
		ctxRule("hashicorp-vault-unseal", groupCloud, "VAULT_UNSEAL_KEY", []string{"operator unseal"},
			`(?i)operator unseal\s+([A-Za-z0-9+/]{40,}={0,2})`),
		// "vault operator init" prints the unseal key shares as "Unseal
		// Key 1: <base64>" (hex before Vault 0.10, as "Key 1: <hex>").
		ctxRule("hashicorp-vault-unseal-init", groupCloud, "VAULT_UNSEAL_KEY", []string{"unseal key", "key 1:", "key 2:", "key 3:", "key 4:", "key 5:"},
			`(?i)\bkey\s{0,3}[0-9]{1,2}\s{0,3}:\s{0,10}([A-Za-z0-9+/]{43}=|[A-Za-z0-9+/]{44}|[0-9a-f]{64,66})`+endB64),
		prefix("hashicorp-tf-token", groupCloud, "TERRAFORM_CLOUD_TOKEN", []string{".atlasv1."}, `\b([A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70})`, 80),
		prefix("dynatrace-token", groupCloud, "DYNATRACE_TOKEN", []string{"dt0c01."}, `\b(dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64})\b`, 100),
		prefix("alibaba-access-key", groupCloud, "ALIBABA_ACCESS_KEY_ID", []string{"ltai"}, `\b(LTAI[A-Za-z0-9]{12,20})\b`, 24),
		ctxRule("kubernetes-bootstrap", groupCloud, "KUBERNETES_BOOTSTRAP_TOKEN", []string{"bootstrap", "token-id"},
			`(?i)(?:bootstrap[\w.-]{0,30}`+sepWS+`\b([a-z0-9]{6}\.[a-z0-9]{16})\b|token-id:\s*([a-z0-9]{6})\s+token-secret:\s*([a-z0-9]{16}))`),
		// ---- VCS and package registries
		prefix("github-token", groupVCS, "GITHUB_TOKEN", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, `\b(gh[pousr]_[A-Za-z0-9]{36,251})\b`, 256),
		prefix("github-fine-grained-pat", groupVCS, "GITHUB_TOKEN", []string{"github_pat_"}, `\b(github_pat_[A-Za-z0-9_]{22,255})\b`, 270),
		ctxRule("github-oauth-secret", groupVCS, "GITHUB_CLIENT_SECRET", []string{"github"},
			`(?i)github[\w.-]{0,30}secret[\w.-]{0,10}`+assign+`\b([0-9a-f]{40})\b`),
		prefix("gitlab-token", groupVCS, "GITLAB_TOKEN",
			[]string{"glpat-", "glptt-", "glrt-", "gldt-", "glft-", "glsoat-", "glcbt-", "glimt-", "gloas-", "glagent-", "gr1348941"},
			`\b((?:gl(?:pat|ptt|rt|dt|ft|soat|cbt|imt|oas|agent)-|GR1348941)[A-Za-z0-9_-]{20,64})`, 80),
		prefix("bitbucket-app-password", groupVCS, "BITBUCKET_APP_PASSWORD", []string{"atbb"}, `\b(ATBB[A-Za-z0-9_=.-]{28,32})\b`, 38),
		prefix("atlassian-api-token", groupVCS, "ATLASSIAN_API_TOKEN", []string{"atatt3"}, `\b(ATATT3[A-Za-z0-9_=-]{150,200})`, 210),
		prefix("npm-token", groupVCS, "NPM_TOKEN", []string{"npm_"}, `\b(npm_[A-Za-z0-9]{36})\b`, 41),
		prefix("pypi-token", groupVCS, "PYPI_TOKEN", []string{"pypi-ageichlwas5vcmc"}, `\b(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,})`, 512),
		prefix("rubygems-token", groupVCS, "RUBYGEMS_API_KEY", []string{"rubygems_"}, `\b(rubygems_[0-9a-f]{48})\b`, 58),
		prefix("nuget-key", groupVCS, "NUGET_API_KEY", []string{"oy2"}, `\b(oy2[a-z0-9]{43})\b`, 47),
		prefix("crates-io-token", groupVCS, "CRATES_IO_TOKEN", []string{"cio"}, `\b(cio[A-Za-z0-9]{32})\b`, 36),
		prefix("dockerhub-token", groupVCS, "DOCKERHUB_TOKEN", []string{"dckr_pat_", "dckr_oat_"}, `\b(dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,})`, 64),
		prefix("artifactory-key", groupVCS, "ARTIFACTORY_API_KEY", []string{"akcp"}, `\b(AKCp[A-Za-z0-9]{69})\b`, 74),
		prefix("artifactory-token", groupVCS, "ARTIFACTORY_TOKEN", []string{"cmvmd"}, `\b(cmVmd[A-Za-z0-9]{59})\b`, 65),
		ctxRule("jenkins-token", groupVCS, "JENKINS_TOKEN", []string{"jenkins"},
			`(?i)jenkins[\w.-]{0,30}`+assign+`\b([0-9a-f]{32,34}|`+uuid+`)\b`),
		ctxRule("jenkins-setup-password", groupVCS, "JENKINS_ADMIN_PASSWORD", []string{"proceed to installation"},
			`(?i)proceed to installation:?\s+([0-9a-f]{32})\b`),
		ctxRule("sonarqube-token", groupVCS, "SONARQUBE_TOKEN", []string{"sonar"},
			`(?i)sonar[\w.-]{0,30}(?:login|token)`+assign+`\b((?:squ_|sqp_|sqa_)?[0-9a-f]{40})\b`),
		prefix("sonarqube-token-v2", groupVCS, "SONARQUBE_TOKEN", []string{"squ_", "sqp_", "sqa_"}, `\b(sq[upa]_[0-9a-f]{40})\b`, 45),
		ctxRule("codeclimate-token", groupVCS, "CODECLIMATE_TOKEN", []string{"codeclimate", "cc_test_reporter"},
			`(?i)(?:codeclimate|cc_test_reporter)[\w.-]{0,30}`+assign+`\b([0-9a-f]{64})\b`),
		prefix("dependency-track-key", groupVCS, "DEPENDENCY_TRACK_API_KEY", []string{"odt_"}, `\b(odt_[A-Za-z0-9]{32,})\b`, 64),
		prefix("postman-key", groupVCS, "POSTMAN_API_KEY", []string{"pmak-"}, `\b(PMAK-[0-9a-f]{24}-[0-9a-f]{34})\b`, 65),
		prefix("sourcegraph-token", groupVCS, "SOURCEGRAPH_TOKEN", []string{"sgp_", "sgph_"},
			`\b(sgph?_(?:[0-9a-f]{16}_|local_)?[0-9a-f]{40}|sgp_[A-Za-z0-9]{64})\b`, 70),
		prefix("stackhawk-key", groupVCS, "STACKHAWK_API_KEY", []string{"hawk."}, `\b(hawk\.[0-9A-Za-z_-]{20}\.[0-9A-Za-z_-]{20})\b`, 47),
		// ---- AI providers
		prefix("anthropic-key", groupAI, "ANTHROPIC_API_KEY", []string{"sk-ant-"}, `\b(sk-ant-(?:api|admin|sid)[0-9]{2}-[A-Za-z0-9_-]{32,128})`, 150),
		{id: "openai-key", group: groupAI, kind: "OPENAI_API_KEY", keywords: []string{"t3blbkfj"},
			re: re(`\b(sk-(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{16,200}T3BlbkFJ[A-Za-z0-9_-]{16,200})`), before: 220, after: 210, score: 1},
		prefix("openai-project-key", groupAI, "OPENAI_API_KEY", []string{"sk-proj-", "sk-svcacct-", "sk-admin-"},
			`\b(sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{58,250})`, 262),
		prefix("groq-key", groupAI, "GROQ_API_KEY", []string{"gsk_"}, `\b(gsk_[A-Za-z0-9]{52})\b`, 57),
		prefix("huggingface-token", groupAI, "HUGGINGFACE_TOKEN", []string{"hf_", "api_org_"}, `\b((?:hf_|api_org_)[A-Za-z]{34})\b`, 43),
		prefix("tavily-key", groupAI, "TAVILY_API_KEY", []string{"tvly-"}, `\b(tvly-(?:dev-)?[A-Za-z0-9]{32})\b`, 42),
		prefix("firecrawl-key", groupAI, "FIRECRAWL_API_KEY", []string{"fc-"}, `\b(fc-[0-9a-f]{32})\b`, 36),
		prefix("replicate-token", groupAI, "REPLICATE_API_TOKEN", []string{"r8_"}, `\b(r8_[A-Za-z0-9]{37})\b`, 41),
		prefix("perplexity-key", groupAI, "PERPLEXITY_API_KEY", []string{"pplx-"}, `\b(pplx-[A-Za-z0-9]{48})\b`, 54),
		// ---- SaaS
		prefix("slack-token", groupSaaS, "SLACK_TOKEN", []string{"xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxr-", "xoxs-", "xoxe-"},
			`\b(xox[abeposr](?:\.xox[a-z])?-[0-9]{6,}-[A-Za-z0-9-]{8,})`, 160),
		prefix("slack-app-token", groupSaaS, "SLACK_TOKEN", []string{"xapp-"}, `\b(xapp-[0-9A-Za-z/+=-]{20,})`, 160),
		prefix("slack-webhook", groupSaaS, "SLACK_WEBHOOK", []string{"hooks.slack.com/"},
			`(hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,})`, 200),
		prefix("stripe-key", groupSaaS, "STRIPE_KEY", []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"},
			`\b((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,247}|whsec_[A-Za-z0-9]{32,})\b`, 256),
		prefix("twilio-key", groupSaaS, "TWILIO_API_KEY", []string{"sk"}, `\b(SK[0-9a-fA-F]{32})\b`, 33),
		prefix("sendgrid-key", groupSaaS, "SENDGRID_API_KEY", []string{"sg."}, `\b(SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})`, 70),
		prefix("mailgun-key", groupSaaS, "MAILGUN_API_KEY", []string{"key-"}, `\b(key-[0-9a-f]{32})\b`, 37),
		{id: "mailchimp-key", group: groupSaaS, kind: "MAILCHIMP_API_KEY", keywords: []string{"-us"},
			re: re(`\b([0-9a-f]{32}-us[0-9]{1,2})\b`), before: 33, after: 4, score: 1},
		ctxRule("postmark-token", groupSaaS, "POSTMARK_TOKEN", []string{"postmark"}, `(?i)postmark[\w.-]{0,30}`+assign+`(`+uuid+`)\b`),
		prefix("shopify-token", groupSaaS, "SHOPIFY_TOKEN", []string{"shpat_", "shpca_", "shppa_", "shpss_"}, `\b(shp(?:at|ca|pa|ss)_[0-9a-fA-F]{32})\b`, 39),
		prefix("square-token", groupSaaS, "SQUARE_TOKEN", []string{"sq0atp-", "sq0csp-", "sq0atb-"}, `\b(sq0(?:atp|csp|atb)-[0-9A-Za-z_-]{22,43})`, 52),
		ctxRule("discord-bot-token", groupSaaS, "DISCORD_TOKEN", []string{"discord"},
			`(?i)discord[\w.-]{0,30}`+sepWS+`([MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})`),
		{id: "discord-webhook", group: groupSaaS, kind: "DISCORD_WEBHOOK", keywords: []string{"/api/webhooks/"},
			re: re(`discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/([A-Za-z0-9_-]{60,68})`), before: 40, after: 100, score: 1},
		{id: "telegram-bot-token", group: groupSaaS, kind: "TELEGRAM_BOT_TOKEN", keywords: []string{":aa"},
			re: re(`\b([0-9]{8,10}:AA[A-Za-z0-9_-]{32,33})` + endTok), before: 11, after: 35, score: 1},
		{id: "msteams-webhook", group: groupSaaS, kind: "MSTEAMS_WEBHOOK", keywords: []string{".office.com/webhook"},
			re: re(`(?i)(?:webhook|outlook)\.office\.com/webhook(?:b2)?/(` + uuid + `@` + uuid + `/IncomingWebhook/[0-9a-f]{32}/[0-9a-f-]{4,36})`), before: 40, after: 200, score: 1},
		prefix("adafruit-key", groupSaaS, "ADAFRUIT_IO_KEY", []string{"aio_"}, `\b(aio_[A-Za-z0-9]{28})\b`, 33),
		prefix("adobe-client-secret", groupSaaS, "ADOBE_CLIENT_SECRET", []string{"p8e-"}, `\b(p8e-[A-Za-z0-9_-]{32})`+endTok, 37),
		prefix("blynk-token", groupSaaS, "BLYNK_TOKEN", []string{"blynk.cloud/"}, `blynk\.cloud/[^\s"']{0,100}?token=([A-Za-z0-9_-]{32})`, 200),
		prefix("blynk-client-credentials", groupSaaS, "BLYNK_CLIENT_SECRET", []string{"oa2-client-id_"},
			`oa2-client-id_[A-Za-z0-9_-]{32}(?::|&client_secret=)([A-Za-z0-9]{40})\b`, 100),
		prefix("dropbox-token", groupSaaS, "DROPBOX_TOKEN", []string{"sl."}, `\b(sl\.(?:u\.)?[A-Za-z0-9_-]{120,})`, 1500),
		prefix("facebook-access-token", groupSaaS, "FACEBOOK_ACCESS_TOKEN", []string{"eaa"}, `\b(EAA[A-Za-z0-9]{90,})`, 512),
		ctxRule("facebook-secret", groupSaaS, "FACEBOOK_SECRET", []string{"facebook"},
			`(?i)facebook[\w.-]{0,30}`+assign+`\b([0-9a-f]{32})\b`),
		prefix("figma-token", groupSaaS, "FIGMA_TOKEN", []string{"figd_"}, `\b(figd_[A-Za-z0-9_-]{40})`, 46),
		ctxRule("figma-token-legacy", groupSaaS, "FIGMA_TOKEN", []string{"figma"},
			`(?i)figma[\w.-]{0,30}`+assign+`\b([0-9]{3,6}-`+uuid+`)\b`),
		prefix("grafana-api-key", groupSaaS, "GRAFANA_TOKEN", []string{"eyjrijoi"}, `\b(eyJrIjoi[A-Za-z0-9+/]{40,}={0,2})`, 400),
		prefix("grafana-cloud-token", groupSaaS, "GRAFANA_TOKEN", []string{"glc_"}, `\b(glc_eyJ[A-Za-z0-9+/=_-]{40,})`, 400),
		prefix("grafana-sa-token", groupSaaS, "GRAFANA_TOKEN", []string{"glsa_"}, `\b(glsa_[A-Za-z0-9]{32}_[0-9a-f]{8})\b`, 47),
		prefix("mapbox-token", groupSaaS, "MAPBOX_TOKEN", []string{"pk.eyj", "sk.eyj", "tk.eyj"},
			`\b([pst]k\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,})`, 400),
		prefix("newrelic-key", groupSaaS, "NEWRELIC_KEY", []string{"nrak-", "nraa-", "nrii-", "nriq-", "nrra-", "nrjs-", "nrsp-", "nrag-"},
			`\b(NRAK-[A-Z0-9]{27}|NRAA-[a-f0-9]{27}|NRI[IQ]-[A-Za-z0-9_-]{32}|NRRA-[a-f0-9]{42}|NRJS-[a-f0-9]{19}|NRSP-[a-z]{2}[0-9]{2}[a-f0-9]{31}|NRAG-[a-f0-9]{38})`+endTok, 50),
		{id: "newrelic-license-key", group: groupSaaS, kind: "NEWRELIC_KEY", keywords: []string{"nral"},
			re: re(`\b([a-f0-9]{36}NRAL|eu01xx[a-f0-9]{30}NRAL)\b`), before: 37, after: 1, score: 1},
		prefix("newrelic-pixie-key", groupSaaS, "NEWRELIC_PIXIE_KEY", []string{"px-dep-", "px-api-"}, `\b(px-(?:dep|api)-`+uuid+`)\b`, 45),
		ctxRule("okta-token", groupSaaS, "OKTA_TOKEN", []string{"okta", "ssws"},
			`(?i)(?:okta|ssws)[\w.-]{0,30}`+sepWS+`\b(00[A-Za-z0-9_-]{40})`+endTok),
		prefix("salesforce-token", groupSaaS, "SALESFORCE_TOKEN", []string{"00d"}, `\b(00[A-Za-z0-9]{13}![A-Za-z0-9_.]{96})`, 114),
		ctxRule("sauce-key", groupSaaS, "SAUCE_ACCESS_KEY", []string{"sauce"}, `(?i)sauce[\w.-]{0,30}`+assign+`(`+uuid+`)\b`),
		prefix("segment-token", groupSaaS, "SEGMENT_TOKEN", []string{"sgp_"}, `\b(sgp_[A-Za-z0-9]{64})\b`, 69),
		prefix("thingsboard-token", groupSaaS, "THINGSBOARD_TOKEN", []string{"thingsboard.cloud/api/v1/"}, `thingsboard\.cloud/api/v1/([a-z0-9]{20})\b`, 48),
		ctxRule("thingsboard-provision", groupSaaS, "THINGSBOARD_TOKEN", []string{"provisiondevice"},
			`(?i)provisionDevice(?:Key|Secret)`+assign+`([a-z0-9]{20})\b`),
		ctxRule("truenas-key", groupSaaS, "TRUENAS_API_KEY", []string{"login_with_api_key"},
			`login_with_api_key"[\s\S]{0,40}?"params"\s*:\s*\[\s*"([0-9]+-[A-Za-z0-9]{64})"`),
		prefix("twitch-stream-key", groupSaaS, "TWITCH_STREAM_KEY", []string{"live_"}, `\b(live_[0-9]{6,10}_[A-Za-z0-9]{30})\b`, 47),
		ctxRule("nasa-key", groupSaaS, "NASA_API_KEY", []string{"api.nasa.gov"}, `api\.nasa\.gov/[^\s"']{0,200}?api_key=([A-Za-z0-9]{40})\b`),
		// ---- Private keys
		{id: "private-key", group: groupKey, kind: "PRIVATE_KEY", keywords: []string{"private key-----", "private key block-----"},
			re:    re(`-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----(?:[A-Za-z0-9+/=\s\\:.,()"'\x60;]|-[A-Za-z0-9])+?(?:-----END[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----|$|-----)`),
			check: pemBody, before: 40, after: 16384, score: 1},
		prefix("putty-private-key", groupKey, "PRIVATE_KEY", []string{"putty-user-key-file-"},
			`(PuTTY-User-Key-File-[0-9]: [\s\S]{0,200}?Private-Lines: [0-9]+[^-]*?Private-MAC: [0-9a-f]+)`, 8192),
		withCheck(prefix("private-key-base64", groupKey, "PRIVATE_KEY", []string{"ls0tls1crudjti"},
			`\b(LS0tLS1CRUdJTi[A-Za-z0-9+/]{40,}={0,2})`, 16384), base64PEMKey),
		prefix("age-secret-key", groupKey, "PRIVATE_KEY", []string{"age-secret-key-1"}, `(AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})`, 76),
		ctxRule("wireguard-key", groupKey, "PRIVATE_KEY", []string{"privatekey", "presharedkey"},
			`(?i)(?:PrivateKey|PresharedKey)\s*=\s*([A-Za-z0-9+/]{43}=)`),
		// ---- JWT
		withCheck(prefix("jwt", groupJWT, "JWT", []string{"eyj"},
			`\b(eyJ[A-Za-z0-9_-]{8,}={0,2}\.eyJ[A-Za-z0-9_-]{8,}={0,2}\.[A-Za-z0-9_-]{8,})`, 8192), jwtHeader),
		{id: "jwt-secret", group: groupJWT, kind: "JWT_SECRET", keywords: []string{"jwt"}, match: matchJWTSecret, score: 0.8, priority: 1},
		// ---- Connection strings
		{id: "connection-uri", group: groupConn, kind: "CONNECTION_STRING", keywords: []string{"://"},
			match: matchURI(true), score: 1, priority: 1},
		{id: "url-credentials", group: groupConn, kind: "BASIC_AUTH", keywords: []string{"://"},
			match: matchURI(false), score: 0.9, priority: 1},
		ctxRule("odbc-password", groupConn, "CONNECTION_STRING", []string{"user id", "uid", "user"},
			`(?i)(?:user id|uid|user)\s*=\s*[^;'"\n]{1,64};[^\n]{0,120}?\b(?:password|pwd)\s*=\s*([^;'"\s]{3,128})`),
		// ---- HTTP authorization headers
		withCheck(ctxRule("http-bearer", groupHTTP, "BEARER_TOKEN", []string{"authorization"},
			`(?i)authorization["']?\s*:\s*["']?bearer\s+([A-Za-z0-9._~+/-]{8,}=*)`), hasDigit),
		ctxRule("http-basic", groupHTTP, "BASIC_AUTH", []string{"authorization"},
			`(?i)authorization["']?\s*:\s*["']?basic\s+([A-Za-z0-9+/]{8,}={0,2})`),
		// Other schemes ("Authorization: SSWS ...", "token ...", "Api-Key
		// ..."): the credential is what follows the scheme name, and must
		// look generated, since the scheme set is open.
		withCheck(ctxRule("http-auth-scheme", groupHTTP, "AUTHORIZATION", []string{"authorization"},
			`(?i)authorization["']?\s*:\s*["']?(?:token|ssws|api-?key|key|sso-key|apikey|digest|hmac)[=\s]\s*([A-Za-z0-9._~+/-]{16,}=*)`), looksGenerated),
		ctxRule("curl-user", groupHTTP, "BASIC_AUTH", []string{"-u ", "--user "},
			`(?:-u|--user)\s+["']?[A-Za-z0-9._@-]{1,64}:([^\s"'@$]{4,128})`),
		// ---- Password hashes
		prefix("password-hash-crypt", groupHash, "PASSWORD_HASH", []string{"$1$", "$2a$", "$2b$", "$2y$", "$2x$", "$5$", "$6$", "$8$", "$9$"},
			`(\$1\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{22}|\$2[abxy]?\$[0-9]{2}\$[./A-Za-z0-9]{53}|\$5\$(?:rounds=[0-9]+\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{43}|\$6\$(?:rounds=[0-9]+\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{86}|\$[89]\$[./A-Za-z0-9]{14}\$[./A-Za-z0-9]{43})`, 130),
		prefix("password-hash-krb5", groupHash, "PASSWORD_HASH", []string{"$krb5asrep$", "$krb5tgs$"},
			`(\$krb5(?:asrep|tgs)\$[0-9]{2}\$[^\s:$]{0,256}:?[0-9a-f]{32}\$[0-9a-f]{64,})`, 8192),
		// ---- Credentials in tool invocations
		ctxRule("psexec", groupCredential, "PASSWORD", []string{"psexec"}, `(?i)psexec(?:\.exe)?\s[^\n]{0,200}?-u\s+\S+\s+-p\s+([^\s"']+)`),
		ctxRule("vmware-viserver", groupCredential, "PASSWORD", []string{"connect-viserver"}, `(?i)connect-viserver\s[^\n]{0,200}?-password\s+([^\s"']+)`),
		ctxRule("netrc", groupCredential, "PASSWORD", []string{"machine"}, `(?i)\bmachine\s+\S+\s+login\s+\S+\s+password\s+(\S+)`),
		ctxRule("dotnet-network-credential", groupCredential, "PASSWORD", []string{"networkcredential"},
			`NetworkCredential\(\s*"[^"\n]*"\s*,\s*"([^"\n]+)"`),
		ctxRule("dotnet-directory-entry", groupCredential, "PASSWORD", []string{"directoryentry"},
			`DirectoryEntry\(\s*"[^"\n]*"\s*,\s*"[^"\n]*"\s*,\s*"([^"\n]+)"`),
		// ---- Infrastructure identifiers: not credentials, but they name an
		// organisation's accounts and storage, which is what leak screening
		// is asked to catch; scored lower.
		lower(prefix("aws-arn", groupInfra, "AWS_ARN", []string{"arn:aws"},
			`\b(arn:aws[a-z-]*:[a-z0-9-]+:[a-z0-9-]*:[0-9]{0,12}:[A-Za-z0-9_/.:*${}+=,@-]+)`, 300)),
		lower(ctxRule("aws-account-id", groupInfra, "AWS_ACCOUNT_ID", []string{"account_id", "accountid"},
			`(?i)account_?id`+assign+`\b([0-9]{12})\b`)),
		{id: "s3-bucket", group: groupInfra, kind: "S3_BUCKET", keywords: []string{"amazonaws.com"},
			re:     re(`(?:\b([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\.s3(?:[.-][a-z0-9-]+)?\.amazonaws\.com|\bs3(?:[.-][a-z0-9-]+)?\.amazonaws\.com/([a-z0-9][a-z0-9._-]{2,62}))`),
			before: 90, after: 70, score: 0.5, priority: 1},
		lower(prefix("gcs-bucket", groupInfra, "GCS_BUCKET", []string{"storage.googleapis.com/"},
			`storage\.googleapis\.com/([a-z0-9][a-z0-9._-]{2,62})`, 90)),
		{id: "shopify-domain", group: groupInfra, kind: "SHOPIFY_DOMAIN", keywords: []string{".myshopify.com"},
			re: re(`\b((?:[a-z0-9-]+\.)*[a-z0-9][a-z0-9-]*\.myshopify\.com)`), before: 80, after: 1, score: 0.5, priority: 1},
		// ---- Generic
		{id: "generic-password", group: groupGeneric, kind: "PASSWORD", keywords: passwordWords,
			match: matchPassword, score: 0.7, priority: 2},
		{id: "generic-secret", group: groupGeneric, kind: "GENERIC_SECRET", keywords: secretWords,
			match: matchSecret, score: 0.7, priority: 2},
		{id: "generic-chosen-secret", group: groupGeneric, kind: "GENERIC_SECRET", keywords: []string{"secret"},
			match: matchChosenSecret, score: 0.6, priority: 2},
		{id: "generic-key", group: groupGeneric, kind: "GENERIC_SECRET", keywords: []string{"key", "pat", "api"},
			match: matchKey, score: 0.6, priority: 2},
		{id: "generic-url-token", group: groupGeneric, kind: "URL_TOKEN", keywords: []string{"://"}, match: matchURLToken, score: 0.6, priority: 2},
		{id: "generic-prefixed-token", group: groupGeneric, kind: "GENERIC_TOKEN", scan: scanPrefixed, score: 0.6, priority: 2},
		{id: "generic-near-token", group: groupGeneric, kind: "GENERIC_TOKEN", keywords: nearWords, match: matchNear, score: 0.5, priority: 3},
		{id: "generic-connection-call", group: groupGeneric, kind: "PASSWORD", keywords: []string{"://"}, match: matchConnectionCall, score: 0.7, priority: 2},
		{id: "generic-b64-json", group: groupGeneric, kind: "GENERIC_TOKEN", keywords: []string{"eyj"}, match: matchB64JSON, score: 0.6, priority: 2},
		{id: "generic-crypt-hash", group: groupGeneric, kind: "PASSWORD_HASH", scan: cryptHashes, score: 0.8, priority: 2},
		// A .pgpass line (host:port:database:user:password) under a
		// mention of the file.
		{id: "generic-pgpass", group: groupGeneric, kind: "PASSWORD", keywords: []string{"pgpass"},
			re: re(`(?m)^[^:\s#]+:(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:([^\s]{4,128})$`), after: 300, score: 0.8, priority: 1},
		{id: "generic-cli-password", group: groupGeneric, kind: "PASSWORD", keywords: []string{"-u "}, match: matchCLIPassword, score: 0.7, priority: 2},
		// A user and a password passed to a credential constructor:
		// new NetworkCredential("user", "pw"), UsernamePasswordCredentials
		// ("user", "pw"), PasswordAuthentication("user", "pw".toCharArray()).
		withCheck(ctxRule("generic-credential-call", groupGeneric, "PASSWORD", []string{"credential(", "credentials(", "authentication("},
			`(?i)(?:credentials?|authentication)\(\s*["'][^"'\n]{1,64}["']\s*,\s*["']([^"'\n]{4,128})["']`), literalPassword),
		// A user and a password passed as literals to a login or basic
		// auth call: smtp.login("me", "pw"), requests' auth=("svc", "pw"),
		// HTTPBasicAuth("svc", "pw"), Go's SetBasicAuth, supertest's
		// .auth("u", "pw"). One word each: a call with prose in its
		// strings labels a button, not an account.
		withCheck(ctxRule("generic-login-call", groupGeneric, "PASSWORD", []string{"login(", "basicauth(", "auth=(", ".auth("},
			`(?i)(?:login|basicauth|auth=|\.auth)\(\s*["'][^"'\s]{1,64}["']\s*,\s*["']([^"'\s]{4,128})["']`), literalPassword),
		// PowerShell's ConvertTo-SecureString with -AsPlainText: the
		// string it is given is the password in clear, whatever it logs
		// in to.
		withCheck(ctxRule("generic-securestring", groupGeneric, "PASSWORD", []string{"convertto-securestring"},
			`(?i)convertto-securestring\s+(?:(?:-string\s+)?["']([^"'\n]{4,128})["'][^\n]{0,40}?-asplaintext|(?:-(?:asplaintext|force)\s+){1,2}(?:-string\s+)?["']([^"'\n]{4,128})["'])`), literalPassword),
		// A generated value in a Cookie or Set-Cookie header, or after
		// curl's --cookie: a session, whatever the site (see matchCookie).
		{id: "generic-cookie", group: groupGeneric, kind: "SESSION_COOKIE", keywords: []string{"cookie:", "--cookie"},
			match: matchCookie, score: 0.6, priority: 2},
		{id: "generic-password-prose", group: groupGeneric, kind: "PASSWORD", keywords: []string{"password"}, anchored: true,
			re:    re(`^(?i)password(?:\s+for\s+(?:the\s+)?user\s+["'\x60][^"'\x60\n]{1,64}["'\x60])?\s+is\s+["'\x60]([^"'\x60\s]{3,64})["'\x60]`),
			check: literalPassword, after: 160, score: 0.6, priority: 2},
	}
	return rs
}

func withCheck(r rule, check func(string) bool) rule { r.check = check; return r }

// lower marks identifiers that are sensitive but not credentials.
func lower(r rule) rule { r.score, r.priority = 0.5, 1; return r }

// jwtHeader reports whether a token's first part decodes to a JSON object
// naming an algorithm, which separates JWTs from other dotted base64.
func jwtHeader(tok string) bool {
	h, _, _ := strings.Cut(tok, ".")
	h = strings.TrimRight(h, "=")
	var buf [768]byte
	if base64.RawURLEncoding.DecodedLen(len(h)) > len(buf) {
		return false
	}
	n, err := base64.RawURLEncoding.Decode(buf[:], []byte(h))
	if err != nil && n == 0 {
		return false
	}
	d := buf[:n]
	return len(d) > 0 && d[0] == '{' && containsBytes(d, `"alg"`)
}

// looksGenerated reports a value with a digit and the entropy of a random
// string of its length.
func looksGenerated(v string) bool {
	return hasDigit(v) && !isSequential(v) && entropy(v) >= math.Min(DefaultEntropyThreshold, math.Log2(float64(len(v)))-0.7)
}

// pemBody reports whether a PEM match carries key material: a run of 40
// base64 characters, which a key's body has on every line and prose that
// names the header ("paste the -----BEGIN PRIVATE KEY----- block") lacks.
// Quotes and '+' are allowed between the lines because keys pasted in code
// are string literals joined across lines.
func pemBody(m string) bool {
	run := 0
	for i := strings.Index(m, "KEY-----") + 8; i > 7 && i < len(m); i++ {
		c := m[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '/' {
			if run++; run >= 40 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// base64PEMKey reports whether a base64 blob starting with "-----BEGIN"
// encodes a private key rather than a certificate or public key.
func base64PEMKey(s string) bool {
	if len(s) > 64 {
		s = s[:64]
	}
	var buf [48]byte
	n, _ := base64.StdEncoding.Decode(buf[:], []byte(s))
	return containsBytes(buf[:n], "PRIVATE KEY")
}

func containsBytes(b []byte, sub string) bool {
	for i := 0; i+len(sub) <= len(b); i++ {
		if string(b[i:i+len(sub)]) == sub {
			return true
		}
	}
	return false
}
