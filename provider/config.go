// Package provider describes the upstream model APIs Promptwall sends
// prompts to (backend-v1.md "Provider", DECISIONS section 4) and calls
// them: natively for the known API types, or through a request template
// for anything else.
//
// It imports no Caddy. Secrets arrive already resolved (the Caddy layer
// replaces placeholders such as {env.OPENAI_API_KEY}); nothing in this
// package logs them, and every text it returns has them masked.
package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/promptwall/promptwall/limits"
)

// Types of DECISIONS section 4.
const (
	TypeOpenAI      = "openai"
	TypeAnthropic   = "anthropic"
	TypeGemini      = "gemini"
	TypeOllama      = "ollama"
	TypeAzureOpenAI = "azure_openai"
	TypeBedrock     = "bedrock"
	TypeCustom      = "custom"
)

// SecretAPIKey is the secret native types send as their API key.
const SecretAPIKey = "api_key"

// Masked replaces every secret value in what the API returns.
const Masked = "********"

// AnthropicVersion is the anthropic-version header of native Anthropic
// requests.
const AnthropicVersion = "2023-06-01"

// DefaultAzureAPIVersion is the api-version of Azure OpenAI requests when
// inputs.api_version is not set.
const DefaultAzureAPIVersion = "2024-10-21"

// ErrInvalidConfig is wrapped by Validate's errors.
var ErrInvalidConfig = errors.New("provider: invalid config")

// Availability says which projects may use a provider.
type Availability struct {
	// Global makes the provider available to every project.
	Global bool `json:"global,omitempty"`
	// ProjectIDs are the projects it is available to besides its own.
	ProjectIDs []string `json:"project_ids,omitempty"`
}

// Template is the spec's ProviderTemplate: how a custom provider is called.
// Body and JSON may use {{input}} (the newest user text), {{messages}} (the
// conversation as a JSON array of {role, content}), {{secrets.NAME}} and
// {{inputs.NAME}}; so may URL, Headers and QueryParams.
type Template struct {
	// Type is "request", the only kind there is. Default: "request".
	Type string `json:"type,omitempty"`
	// URL is the request URL; required for type custom.
	URL string `json:"url,omitempty"`
	// Method is the HTTP method. Default: POST.
	Method string `json:"method,omitempty"`
	// Headers are added to the request.
	Headers map[string]string `json:"headers,omitempty"`
	// QueryParams are added to the URL's query.
	QueryParams map[string]string `json:"query_params,omitempty"`
	// Body is a raw request body (Content-Type text/plain unless Headers
	// say otherwise). At most one of Body and JSON.
	Body string `json:"body,omitempty"`
	// JSON is a JSON request body; placeholders inside JSON strings are
	// escaped for the string, placeholders outside strings become JSON
	// values. The rendered body must be valid JSON.
	JSON string `json:"json,omitempty"`
	// AWSAuth names AWS SigV4 signing settings; not supported by Send yet
	// (Validate refuses it) and kept only so the config round-trips.
	AWSAuth string `json:"aws_auth,omitempty"`
	// Outputs maps output names to JSON paths into the answer
	// (choices[0].message.content); "response" is the assistant text and
	// is required for type custom.
	Outputs map[string]string `json:"outputs,omitempty"`
	// Timeout is the request timeout in milliseconds. Default: 60000. It
	// applies to native types too.
	Timeout int `json:"timeout,omitempty"`
}

// Config is one configured provider: the Caddy JSON (snake_case) of a
// provider, convertible to the spec's Provider with Public.
type Config struct {
	// Name identifies the provider in requests (POST /prompts takes a
	// name or an id), limits and metrics; required and unique.
	Name string `json:"name,omitempty"`
	// ID is a UUID. Default: derived from Name, so it is stable across
	// restarts and reloads.
	ID string `json:"id,omitempty"`
	// Type is openai, anthropic, gemini, ollama, azure_openai, bedrock or
	// custom; required.
	Type string `json:"type,omitempty"`
	// Tag is a free-form label.
	Tag string `json:"tag,omitempty"`
	// ProjectID is the project the provider was added to.
	ProjectID string `json:"project_id,omitempty"`
	// SystemProviderID names the built-in provider this one derives from.
	SystemProviderID string `json:"system_provider_id,omitempty"`
	// Availability says which other projects may use it.
	Availability Availability `json:"availability,omitempty"`
	// Orgs names the organizations, besides the default one that owns
	// every declared provider, that may use it and list it. Default: the
	// default organization only.
	Orgs []string `json:"orgs,omitempty"`
	// HasLogo tells a UI that a logo exists.
	HasLogo bool `json:"has_logo,omitempty"`
	// Inputs are type-specific settings: max_tokens (anthropic, default
	// 1024), api_version (azure_openai), and values for {{inputs.NAME}}.
	Inputs map[string]any `json:"inputs,omitempty"`
	// MaxRequestsPerSecond is a decimal string; "" means no limit.
	MaxRequestsPerSecond string `json:"max_requests_per_second,omitempty"`
	// RequestConcurrencyLimit is a decimal string; "" means no limit.
	RequestConcurrencyLimit string `json:"request_concurrency_limit,omitempty"`
	// RedTeam marks a provider for red-team campaigns.
	RedTeam bool `json:"red_team,omitempty"`
	// SIEM marks a provider whose records are exported to a SIEM.
	SIEM bool `json:"siem,omitempty"`
	// Disabled keeps the provider configured but refuses to send to it;
	// enabledForProjectId lists only enabled providers.
	Disabled bool `json:"disabled,omitempty"`
	// Secrets are credentials by name; native types send "api_key". The
	// values may be Caddy placeholders ({env.OPENAI_API_KEY}) resolved by
	// the caller. The API shows each value as "********".
	Secrets map[string]string `json:"secrets,omitempty"`
	// Template drives type custom.
	Template Template `json:"template,omitempty"`
	// BaseURL overrides the API's default base URL (required for
	// azure_openai: https://NAME.openai.azure.com).
	BaseURL string `json:"base_url,omitempty"`
	// Model is the model (Azure: the deployment) requests use.
	Model string `json:"model,omitempty"`
}

// DefaultBaseURL returns the base URL a native type uses without BaseURL.
func DefaultBaseURL(typ string) string {
	switch typ {
	case TypeOpenAI:
		return "https://api.openai.com/v1"
	case TypeAnthropic:
		return "https://api.anthropic.com"
	case TypeGemini:
		return "https://generativelanguage.googleapis.com/v1beta"
	case TypeOllama:
		return "http://localhost:11434"
	}
	return ""
}

// DeriveID returns the UUID a provider named name gets by default: the
// SHA-256 of the name shaped as a version-8 UUID.
func DeriveID(name string) string {
	sum := sha256.Sum256([]byte("promptwall/provider/" + name))
	sum[6] = (sum[6] & 0x0f) | 0x80
	sum[8] = (sum[8] & 0x3f) | 0x80
	h := hex.EncodeToString(sum[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Provision applies the defaults: ID, template type and method.
func (c *Config) Provision() {
	if c.ID == "" && c.Name != "" {
		c.ID = DeriveID(c.Name)
	}
	if c.Type == TypeCustom || c.Template.URL != "" {
		if c.Template.Type == "" {
			c.Template.Type = "request"
		}
		if c.Template.Method == "" {
			c.Template.Method = "POST"
		}
	}
}

// Validate checks the config without side effects.
func (c *Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: provider %q: %s", ErrInvalidConfig, c.Name, fmt.Sprintf(format, args...))
	}
	if c.Name == "" {
		return fmt.Errorf("%w: a provider needs a name", ErrInvalidConfig)
	}
	switch c.Type {
	case TypeOpenAI, TypeAnthropic, TypeGemini, TypeOllama:
		// Inline traffic carries the client's model: a model is needed only
		// when the gateway itself calls the provider, and Send says so.
	case TypeAzureOpenAI:
		if c.BaseURL == "" || c.Model == "" {
			return bad("azure_openai needs base_url (https://NAME.openai.azure.com) and model (the deployment)")
		}
	case TypeCustom:
		if c.Template.URL == "" {
			return bad("type custom needs template.url")
		}
		if c.Template.Outputs["response"] == "" {
			return bad("type custom needs template.outputs.response, the JSON path of the answer text")
		}
	case TypeBedrock:
		return bad("type bedrock needs AWS SigV4 signing, which Promptwall does not implement yet; put a signing proxy in front and use type custom")
	default:
		return bad("unknown type %q (openai, anthropic, gemini, ollama, azure_openai, bedrock, custom)", c.Type)
	}
	if c.Template.Type != "" && c.Template.Type != "request" {
		return bad("template.type must be \"request\"")
	}
	if c.Template.AWSAuth != "" {
		return bad("template.aws_auth is not supported yet")
	}
	if c.Template.Body != "" && c.Template.JSON != "" {
		return bad("template.body and template.json are exclusive")
	}
	if c.Template.Timeout < 0 {
		return bad("template.timeout must be positive milliseconds")
	}
	for name, path := range c.Template.Outputs {
		if _, err := parsePath(path); err != nil {
			return bad("template.outputs.%s: %v", name, err)
		}
	}
	if _, err := c.Limits(); err != nil {
		return bad("%v", err)
	}
	return c.checkPlaceholders()
}

// checkPlaceholders finds unknown placeholders and undefined secrets at
// config time, rather than on the first prompt.
func (c *Config) checkPlaceholders() error {
	r := &renderer{cfg: c}
	t := &c.Template
	fields := map[string]string{"template.url": t.URL, "template.body": t.Body, "template.json": t.JSON}
	for k, v := range t.Headers {
		fields["template.headers."+k] = v
	}
	for k, v := range t.QueryParams {
		fields["template.queryParams."+k] = v
	}
	for field, v := range fields {
		if _, err := r.render(v, field, modeRaw); err != nil {
			return fmt.Errorf("%w: provider %q: %v", ErrInvalidConfig, c.Name, err)
		}
	}
	return nil
}

// Limits parses the provider's traffic limits.
func (c *Config) Limits() (limits.Config, error) {
	return limits.ParseConfig(c.MaxRequestsPerSecond, c.RequestConcurrencyLimit)
}

// SecretHeader returns the header that carries the API key for the type
// and the prefix of its value: openai and custom "Authorization: Bearer",
// anthropic "x-api-key", azure_openai "api-key", gemini "x-goog-api-key";
// "" for ollama, which takes no key.
func SecretHeader(typ string) (name, prefix string) {
	switch typ {
	case TypeOpenAI, TypeCustom:
		return "Authorization", "Bearer "
	case TypeAnthropic:
		return "x-api-key", ""
	case TypeAzureOpenAI:
		return "api-key", ""
	case TypeGemini:
		return "x-goog-api-key", ""
	}
	return "", ""
}

// AvailableTo reports whether project may use the provider: it is global,
// was added to that project, or lists it.
func (c *Config) AvailableTo(project string) bool {
	return c.Availability.Global || (project != "" && (c.ProjectID == project || slices.Contains(c.Availability.ProjectIDs, project)))
}

// ProviderJSON is the spec's Provider with every field present.
type ProviderJSON struct {
	ID                      string            `json:"id"`
	Name                    string            `json:"name"`
	Type                    string            `json:"type"`
	Tag                     string            `json:"tag"`
	ProjectID               string            `json:"projectId"`
	SystemProviderID        string            `json:"systemProviderId"`
	Availability            AvailabilityJSON  `json:"availability"`
	HasLogo                 bool              `json:"hasLogo"`
	Inputs                  map[string]any    `json:"inputs"`
	MaxRequestsPerSecond    string            `json:"maxRequestsPerSecond"`
	RequestConcurrencyLimit string            `json:"requestConcurrencyLimit"`
	RedTeam                 bool              `json:"redTeam"`
	SIEM                    bool              `json:"siem"`
	Secrets                 map[string]string `json:"secrets"`
	Template                TemplateJSON      `json:"template"`
}

// AvailabilityJSON is Provider.availability.
type AvailabilityJSON struct {
	Global     bool     `json:"global"`
	ProjectIDs []string `json:"projectIds"`
}

// TemplateJSON is the spec's ProviderTemplate with every field present.
type TemplateJSON struct {
	Type        string            `json:"type"`
	URL         string            `json:"url"`
	Method      string            `json:"method"`
	Headers     map[string]string `json:"headers"`
	QueryParams map[string]string `json:"queryParams"`
	Body        string            `json:"body"`
	JSON        string            `json:"json"`
	AWSAuth     string            `json:"awsAuth"`
	Outputs     map[string]string `json:"outputs"`
	Timeout     int               `json:"timeout"`
}

// sensitiveHeader reports header names whose literal values are
// credentials.
func sensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	return n == "authorization" || n == "proxy-authorization" || n == "cookie" ||
		strings.Contains(n, "key") || strings.Contains(n, "token") || strings.Contains(n, "secret")
}

// Public returns the spec's Provider. Secret values read "********"; so
// does every occurrence of a secret value in the template, and the literal
// value of a credential header (one that does not take its value from a
// {{secrets.NAME}} placeholder).
func (c *Config) Public() ProviderJSON {
	secrets := make(map[string]string, len(c.Secrets))
	for k := range c.Secrets {
		secrets[k] = Masked
	}
	mask := secretMasker(c.Secrets)
	maskMap := func(m map[string]string, headers bool) map[string]string {
		out := make(map[string]string, len(m))
		for k, v := range m {
			if headers && sensitiveHeader(k) && !strings.Contains(v, "{{") {
				v = Masked
			}
			out[k] = mask(v)
		}
		return out
	}
	inputs := map[string]any{}
	maps.Copy(inputs, c.Inputs)
	projects := slices.Clone(c.Availability.ProjectIDs)
	if projects == nil {
		projects = []string{}
	}
	id := c.ID
	if id == "" && c.Name != "" {
		id = DeriveID(c.Name)
	}
	t := c.Template
	timeout := t.Timeout
	if timeout == 0 && (c.Type == TypeCustom || t.URL != "") {
		timeout = int(DefaultTimeout.Milliseconds())
	}
	outputs := maps.Clone(t.Outputs)
	if outputs == nil {
		outputs = map[string]string{}
	}
	return ProviderJSON{
		ID: id, Name: c.Name, Type: c.Type, Tag: c.Tag, ProjectID: c.ProjectID,
		SystemProviderID: c.SystemProviderID,
		Availability:     AvailabilityJSON{Global: c.Availability.Global, ProjectIDs: projects},
		HasLogo:          c.HasLogo, Inputs: inputs,
		MaxRequestsPerSecond: c.MaxRequestsPerSecond, RequestConcurrencyLimit: c.RequestConcurrencyLimit,
		RedTeam: c.RedTeam, SIEM: c.SIEM, Secrets: secrets,
		Template: TemplateJSON{
			Type: t.Type, URL: mask(t.URL), Method: t.Method,
			Headers: maskMap(t.Headers, true), QueryParams: maskMap(t.QueryParams, false),
			Body: mask(t.Body), JSON: mask(t.JSON), AWSAuth: t.AWSAuth,
			Outputs: outputs, Timeout: timeout,
		},
	}
}

// secretMasker returns a function that replaces every secret value in a
// text by "********". Longer values go first so that a secret containing
// another is masked whole.
func secretMasker(secrets map[string]string) func(string) string {
	vals := make([]string, 0, len(secrets))
	for _, v := range secrets {
		if v != "" {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return func(s string) string { return s }
	}
	slices.SortFunc(vals, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		pairs = append(pairs, v, Masked)
	}
	r := strings.NewReplacer(pairs...)
	return r.Replace
}
