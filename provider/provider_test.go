package provider

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

const secretKey = "sk-test-SECRET-0123456789"

var conversation = []Message{
	{Role: "system", Content: "be brief"},
	{Role: "user", Content: "first \"question\"\n"},
	{Role: "assistant", Content: "first answer"},
	{Role: "user", Content: "second <question>"},
}

// seen is what an upstream received.
type seen struct {
	method, path, query string
	header              http.Header
	body                map[string]any
	raw                 string
}

func upstream(t *testing.T, status int, answer string, got *seen) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		*got = seen{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, header: r.Header.Clone(), raw: string(b)}
		_ = json.Unmarshal(b, &got.body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func roles(t *testing.T, v any, roleKey, textKey string) [][2]string {
	t.Helper()
	list, _ := v.([]any)
	var out [][2]string
	for _, m := range list {
		mm := m.(map[string]any)
		text, _ := mm[textKey].(string)
		if textKey == "parts" {
			text = mm["parts"].([]any)[0].(map[string]any)["text"].(string)
		}
		out = append(out, [2]string{mm[roleKey].(string), text})
	}
	return out
}

func TestSendNative(t *testing.T) {
	chatTurns := [][2]string{{"system", "be brief"}, {"user", "first \"question\"\n"}, {"assistant", "first answer"}, {"user", "second <question>"}}
	tests := []struct {
		name   string
		cfg    Config
		answer string
		want   string
		check  func(t *testing.T, s *seen)
	}{
		{
			name:   "openai",
			cfg:    Config{Type: TypeOpenAI, Model: "gpt-4o"},
			answer: `{"choices":[{"message":{"role":"assistant","content":"hello from openai"}}]}`,
			want:   "hello from openai",
			check: func(t *testing.T, s *seen) {
				if s.path != "/chat/completions" || s.header.Get("Authorization") != "Bearer "+secretKey {
					t.Errorf("path %q auth %q", s.path, s.header.Get("Authorization"))
				}
				if s.body["model"] != "gpt-4o" || !reflect.DeepEqual(roles(t, s.body["messages"], "role", "content"), chatTurns) {
					t.Errorf("body %s", s.raw)
				}
			},
		},
		{
			name:   "azure_openai",
			cfg:    Config{Type: TypeAzureOpenAI, Model: "my-deploy", Inputs: map[string]any{"api_version": "2025-01-01"}},
			answer: `{"choices":[{"message":{"role":"assistant","content":"hello from azure"}}]}`,
			want:   "hello from azure",
			check: func(t *testing.T, s *seen) {
				if s.path != "/openai/deployments/my-deploy/chat/completions" || s.query != "api-version=2025-01-01" {
					t.Errorf("url %s?%s", s.path, s.query)
				}
				if s.header.Get("api-key") != secretKey || s.header.Get("Authorization") != "" {
					t.Errorf("auth headers %v", s.header)
				}
				if _, ok := s.body["model"]; ok {
					t.Errorf("azure body names a model: %s", s.raw)
				}
			},
		},
		{
			name:   "anthropic",
			cfg:    Config{Type: TypeAnthropic, Model: "claude-x", Inputs: map[string]any{"max_tokens": float64(77)}},
			answer: `{"content":[{"type":"text","text":"hello"},{"type":"text","text":"from claude"}]}`,
			want:   "hello\nfrom claude",
			check: func(t *testing.T, s *seen) {
				if s.path != "/v1/messages" || s.header.Get("x-api-key") != secretKey || s.header.Get("anthropic-version") != AnthropicVersion {
					t.Errorf("path %q headers %v", s.path, s.header)
				}
				if s.body["system"] != "be brief" || s.body["max_tokens"] != float64(77) {
					t.Errorf("body %s", s.raw)
				}
				if got := roles(t, s.body["messages"], "role", "content"); !reflect.DeepEqual(got, chatTurns[1:]) {
					t.Errorf("messages %v", got)
				}
			},
		},
		{
			name:   "gemini",
			cfg:    Config{Type: TypeGemini, Model: "gemini-pro"},
			answer: `{"candidates":[{"content":{"role":"model","parts":[{"text":"hello from gemini"}]}}]}`,
			want:   "hello from gemini",
			check: func(t *testing.T, s *seen) {
				if s.path != "/models/gemini-pro:generateContent" || s.header.Get("x-goog-api-key") != secretKey {
					t.Errorf("path %q headers %v", s.path, s.header)
				}
				want := [][2]string{{"user", "first \"question\"\n"}, {"model", "first answer"}, {"user", "second <question>"}}
				if got := roles(t, s.body["contents"], "role", "parts"); !reflect.DeepEqual(got, want) {
					t.Errorf("contents %v", got)
				}
				if !strings.Contains(s.raw, `"systemInstruction":{"parts":[{"text":"be brief"}]}`) {
					t.Errorf("system instruction missing: %s", s.raw)
				}
			},
		},
		{
			name:   "ollama",
			cfg:    Config{Type: TypeOllama, Model: "llama3"},
			answer: `{"model":"llama3","message":{"role":"assistant","content":"hello from ollama"},"done":true}`,
			want:   "hello from ollama",
			check: func(t *testing.T, s *seen) {
				if s.path != "/api/chat" || s.body["stream"] != false || s.body["model"] != "llama3" {
					t.Errorf("path %q body %s", s.path, s.raw)
				}
				for k := range s.header {
					if strings.Contains(strings.ToLower(k), "key") || k == "Authorization" {
						t.Errorf("ollama got a credential header %s", k)
					}
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got seen
			srv := upstream(t, 200, tt.answer, &got)
			cfg := tt.cfg
			cfg.Name = tt.name
			cfg.BaseURL = srv.URL
			if cfg.Type != TypeOllama {
				cfg.Secrets = map[string]string{SecretAPIKey: secretKey}
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			res, err := (&Client{}).Send(context.Background(), &cfg, conversation)
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tt.want || res.Status != 200 || string(res.Raw) != tt.answer {
				t.Fatalf("result %+v", res)
			}
			if res.Conversation == nil || len(res.Conversation.Messages) == 0 {
				t.Fatalf("no conversation to screen")
			}
			if got.method != http.MethodPost || !strings.HasPrefix(got.header.Get("Content-Type"), "application/json") {
				t.Errorf("method %s content type %q", got.method, got.header.Get("Content-Type"))
			}
			tt.check(t, &got)
		})
	}
}

func customConfig(url string) Config {
	return Config{
		Name: "custom", Type: TypeCustom,
		Secrets: map[string]string{"token": secretKey},
		Inputs:  map[string]any{"temperature": 0.5},
		Template: Template{
			URL:         url + "/v2/{{inputs.route}}/generate",
			Headers:     map[string]string{"X-Auth": "Token {{secrets.token}}", "X-Plain": "yes"},
			QueryParams: map[string]string{"q": "{{input}}", "fixed": "1"},
			JSON:        `{"prompt": "User says: {{input}}", "history": {{messages}}, "temperature": {{inputs.temperature}}, "last": {{input}}}`,
			Outputs:     map[string]string{"response": "data.items[1].text"},
		},
	}
}

func TestSendCustomTemplate(t *testing.T) {
	var got seen
	srv := upstream(t, 200, `{"data":{"items":[{"text":"no"},{"text":"custom answer"}]}}`, &got)
	cfg := customConfig(srv.URL)
	cfg.Inputs["route"] = "a b/c"
	cfg.Provision()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	res, err := (&Client{}).Send(context.Background(), &cfg, conversation)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "custom answer" {
		t.Fatalf("text %q", res.Text)
	}
	if got.path != "/v2/a b/c/generate" {
		t.Errorf("path %q: the input was not escaped into one path segment", got.path)
	}
	if got.header.Get("X-Auth") != "Token "+secretKey || got.header.Get("X-Plain") != "yes" {
		t.Errorf("headers %v", got.header)
	}
	if !strings.Contains(got.query, "q=second+%3Cquestion%3E") || !strings.Contains(got.query, "fixed=1") {
		t.Errorf("query %q", got.query)
	}
	if !json.Valid([]byte(got.raw)) {
		t.Fatalf("rendered body is not JSON: %s", got.raw)
	}
	if got.body["prompt"] != "User says: second <question>" || got.body["last"] != "second <question>" || got.body["temperature"] != 0.5 {
		t.Errorf("body %s", got.raw)
	}
	history := roles(t, got.body["history"], "role", "content")
	if len(history) != 4 || history[1][1] != "first \"question\"\n" {
		t.Errorf("history %v", history)
	}
}

func TestSendErrors(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server notices a closed connection only once the body
		// has been read.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	var got seen
	tests := []struct {
		name   string
		cfg    func() Config
		kind   error
		status int
		raw    bool
	}{
		{
			name: "timeout",
			cfg: func() Config {
				c := Config{Name: "o", Type: TypeOpenAI, Model: "m", BaseURL: slow.URL}
				c.Template.Timeout = 50
				return c
			},
			kind: ErrTimeout, status: 504,
		},
		{
			name: "upstream 500 echoing the key",
			cfg: func() Config {
				srv := upstream(t, 500, `{"error":"bad key `+secretKey+`"}`, &got)
				return Config{Name: "o", Type: TypeOpenAI, Model: "m", BaseURL: srv.URL, Secrets: map[string]string{SecretAPIKey: secretKey}}
			},
			kind: ErrUpstream, status: 502, raw: true,
		},
		{
			name: "not JSON",
			cfg: func() Config {
				srv := upstream(t, 200, `<html>hi</html>`, &got)
				return Config{Name: "o", Type: TypeOpenAI, Model: "m", BaseURL: srv.URL}
			},
			kind: ErrUpstream, status: 502, raw: true,
		},
		{
			name: "wrong shape for the type",
			cfg: func() Config {
				srv := upstream(t, 200, `{"foo":1}`, &got)
				return Config{Name: "o", Type: TypeAnthropic, Model: "m", BaseURL: srv.URL}
			},
			kind: ErrUpstream, status: 502, raw: true,
		},
		{
			name: "custom output missing",
			cfg: func() Config {
				srv := upstream(t, 200, `{"data":{"items":[]}}`, &got)
				c := customConfig(srv.URL)
				c.Inputs["route"] = "x"
				return c
			},
			kind: ErrUpstream, status: 502, raw: true,
		},
		{
			name: "unknown placeholder",
			cfg: func() Config {
				c := customConfig("http://127.0.0.1:1")
				c.Template.JSON = `{"a": "{{nope}}"}`
				return c
			},
			kind: ErrTemplate, status: 502,
		},
		{
			name: "missing secret",
			cfg: func() Config {
				c := customConfig("http://127.0.0.1:1")
				c.Template.Headers = map[string]string{"X": "{{secrets.other}}"}
				return c
			},
			kind: ErrTemplate, status: 502,
		},
		{
			name: "template renders invalid JSON",
			cfg: func() Config {
				c := customConfig("http://127.0.0.1:1")
				c.Inputs["route"] = "x"
				c.Template.JSON = `{"a": {{input}} {{input}}}`
				return c
			},
			kind: ErrTemplate, status: 502,
		},
		{
			name: "answer too large",
			cfg: func() Config {
				srv := upstream(t, 200, `{"choices":[{"message":{"content":"`+strings.Repeat("x", 200)+`"}}]}`, &got)
				return Config{Name: "o", Type: TypeOpenAI, Model: "m", BaseURL: srv.URL}
			},
			kind: ErrUpstream, status: 502,
		},
		{
			name: "unreachable",
			cfg: func() Config {
				return Config{Name: "o", Type: TypeOpenAI, Model: "m", BaseURL: "http://127.0.0.1:1"}
			},
			kind: ErrUpstream, status: 502,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg()
			start := time.Now()
			res, err := (&Client{MaxResponseBytes: 128}).Send(context.Background(), &cfg, conversation)
			if !errors.Is(err, tt.kind) {
				t.Fatalf("error %v, want %v", err, tt.kind)
			}
			if HTTPStatus(err) != tt.status {
				t.Errorf("HTTPStatus = %d, want %d", HTTPStatus(err), tt.status)
			}
			if strings.Contains(err.Error(), secretKey) || strings.Contains(string(res.Raw), secretKey) {
				t.Errorf("secret leaked: %v / %s", err, res.Raw)
			}
			if tt.raw && len(res.Raw) == 0 {
				t.Errorf("Raw empty: the record would lose the provider's answer")
			}
			if tt.kind == ErrTimeout && time.Since(start) > 2*time.Second {
				t.Errorf("timeout took %s", time.Since(start))
			}
		})
	}
}

func TestCallerCancelIsNotTimeout(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer slow.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	cfg := Config{Name: "o", Type: TypeOpenAI, Model: "m", BaseURL: slow.URL}
	_, err := (&Client{}).Send(ctx, &cfg, conversation)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	var leaked bool
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = r.Header.Get("x-api-key") != ""
		_, _ = io.WriteString(w, `{"content":[]}`)
	}))
	defer target.Close()
	redirect := httptest.NewServer(http.RedirectHandler(target.URL+"/v1/messages", http.StatusTemporaryRedirect))
	defer redirect.Close()
	cfg := Config{Name: "a", Type: TypeAnthropic, Model: "m", BaseURL: redirect.URL, Secrets: map[string]string{SecretAPIKey: secretKey}}
	_, err := (&Client{}).Send(context.Background(), &cfg, conversation)
	if !errors.Is(err, ErrUpstream) || leaked {
		t.Fatalf("redirect followed (leaked=%v), err %v", leaked, err)
	}
}

func TestPublic(t *testing.T) {
	cfg := customConfig("https://llm.example.com")
	cfg.Secrets["api_key"] = "literal-in-url"
	cfg.Template.URL = "https://llm.example.com/x?key=literal-in-url"
	cfg.Template.Headers["Authorization"] = "Bearer hardcoded"
	cfg.Provision()
	b, err := json.Marshal(cfg.Public())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for _, k := range []string{"id", "name", "type", "tag", "projectId", "systemProviderId", "availability", "hasLogo",
		"inputs", "maxRequestsPerSecond", "requestConcurrencyLimit", "redTeam", "siem", "secrets", "template"} {
		if _, ok := m[k]; !ok {
			t.Errorf("Provider JSON lacks %s", k)
		}
	}
	tmpl := m["template"].(map[string]any)
	for _, k := range []string{"type", "url", "method", "headers", "queryParams", "body", "json", "awsAuth", "outputs", "timeout"} {
		if _, ok := tmpl[k]; !ok {
			t.Errorf("ProviderTemplate JSON lacks %s", k)
		}
	}
	if m["id"] != DeriveID("custom") || tmpl["timeout"] != float64(60000) || tmpl["method"] != "POST" {
		t.Errorf("defaults: id %v timeout %v method %v", m["id"], tmpl["timeout"], tmpl["method"])
	}
	for _, leak := range []string{secretKey, "literal-in-url", "hardcoded"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("Public leaks %q: %s", leak, b)
		}
	}
	if !strings.Contains(string(b), `"X-Auth":"Token {{secrets.token}}"`) {
		t.Errorf("placeholder header should stay readable: %s", b)
	}
	empty, _ := json.Marshal((&Config{Name: "n", Type: TypeOpenAI}).Public())
	for _, want := range []string{`"inputs":{}`, `"secrets":{}`, `"projectIds":[]`, `"headers":{}`, `"outputs":{}`} {
		if !strings.Contains(string(empty), want) {
			t.Errorf("empty provider JSON lacks %s: %s", want, empty)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := Config{Name: "o", Type: TypeOpenAI, Model: "m"}
	tests := []struct {
		name string
		mod  func(c *Config)
		err  string
	}{
		{"valid", func(*Config) {}, ""},
		{"no name", func(c *Config) { c.Name = "" }, "needs a name"},
		{"unknown type", func(c *Config) { c.Type = "x" }, "unknown type"},
		{"no model is fine for inline use", func(c *Config) { c.Model = "" }, ""},
		{"azure without base", func(c *Config) { c.Type = TypeAzureOpenAI }, "base_url"},
		{"custom without url", func(c *Config) { c.Type = TypeCustom }, "template.url"},
		{"bedrock", func(c *Config) { c.Type = TypeBedrock }, "SigV4"},
		{"bad rate", func(c *Config) { c.MaxRequestsPerSecond = "fast" }, "maxRequestsPerSecond"},
		{"bad concurrency", func(c *Config) { c.RequestConcurrencyLimit = "-2" }, "requestConcurrencyLimit"},
		{"bad output path", func(c *Config) { c.Template.Outputs = map[string]string{"response": "a[x]"} }, "outputs.response"},
		{"unknown placeholder", func(c *Config) { c.Template.Headers = map[string]string{"X": "{{foo}}"} }, "unknown placeholder"},
		{"undefined secret", func(c *Config) { c.Template.Headers = map[string]string{"X": "{{secrets.k}}"} }, "secret \"k\""},
	}
	for _, tt := range tests {
		c := ok
		tt.mod(&c)
		err := c.Validate()
		if (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
		}
	}
}

func TestExtract(t *testing.T) {
	doc := []byte(`{"a":{"b":[{"c":"x"},{"c":"y","n":3}]},"weird key":{"k]":"z"},"o":{"p":1}}`)
	tests := []struct {
		path, want string
		err        bool
	}{
		{"a.b[1].c", "y", false},
		{"$.a.b[0].c", "x", false},
		{"a.b[1].n", "3", false},
		{`["weird key"]["k]"]`, "z", false},
		{"o", `{"p":1}`, false},
		{"a.b[2].c", "", true},
		{"a.x", "", true},
		{"a[0]", "", true},
		{"a..b", "", true},
		{"", "", true},
	}
	for _, tt := range tests {
		got, err := extract(doc, tt.path)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("extract(%q) = %q, %v; want %q (error %v)", tt.path, got, err, tt.want, tt.err)
		}
	}
}
