package guardrail

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/promptwall/promptwall/format"
	"github.com/promptwall/promptwall/scanner"
)

// portkey is Portkey's webhook guardrail (default.webhook). Portkey posts
// its hook context: the request (json as sent to the gateway, its last text),
// the response once there is one, provider, requestType, metadata and
// eventType (beforeRequestHook or afterRequestHook); it reads verdict and,
// when transformedData.request.json or transformedData.response.json is
// set, sends that body on instead. Portkey gives the webhook 3 s by default.
type portkey struct{}

func (portkey) Name() string { return NamePortkey }

type portkeyContext struct {
	Request struct {
		JSON json.RawMessage `json:"json"`
		Text *string         `json:"text"`
	} `json:"request"`
	Response struct {
		JSON       json.RawMessage `json:"json"`
		Text       *string         `json:"text"`
		StatusCode *int            `json:"statusCode"`
	} `json:"response"`
	Provider    string         `json:"provider"`
	RequestType string         `json:"requestType"`
	Metadata    map[string]any `json:"metadata"`
	EventType   string         `json:"eventType"`
}

// portkeyState keeps the body that was screened, to rewrite it on modify;
// body is nil when only the hook's text could be read.
type portkeyState struct {
	f    format.Format
	body json.RawMessage
}

// portkeyFormat is the wire format of a request type: Portkey hands hooks
// the body in OpenAI's shapes, or Anthropic's for /v1/messages.
func portkeyFormat(requestType string) format.Format {
	name := ""
	switch requestType {
	case "chatComplete", "":
		name = format.NameOpenAIChat
	case "complete":
		name = format.NameOpenAICompletions
	case "embed":
		name = format.NameOpenAIEmbeddings
	case "messages":
		name = format.NameAnthropicMessages
	default:
		return nil
	}
	f, _ := format.ByName(name)
	return f
}

func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 2 && raw[0] == '{'
}

func (portkey) Parse(_ string, body []byte) (*Check, error) {
	var ctx portkeyContext
	if err := decode(body, &ctx); err != nil {
		return nil, err
	}
	c := &Check{Shape: NamePortkey}
	c.Metadata = Metadata{
		Caller: NamePortkey, Provider: meta(ctx.Provider), RequestType: meta(ctx.RequestType),
		Extra: extraMeta(ctx.Metadata),
	}
	if u, ok := ctx.Metadata["user"].(string); ok {
		c.Metadata.User = meta(u)
	}
	switch ctx.EventType {
	case "beforeRequestHook":
		c.Direction = scanner.Input
	case "afterRequestHook":
		c.Direction = scanner.Output
	case "":
		// Gateways before eventType was sent: a hook with a response is
		// an after-request hook.
		c.Direction = scanner.Input
		if ctx.Response.StatusCode != nil {
			c.Direction = scanner.Output
		}
	default:
		return nil, invalid("eventType", `eventType must be "beforeRequestHook" or "afterRequestHook"`)
	}
	raw, text, role, field := ctx.Request.JSON, ctx.Request.Text, scanner.RoleUser, "request"
	if c.Direction == scanner.Output {
		raw, text, role, field = ctx.Response.JSON, ctx.Response.Text, scanner.RoleAssistant, "response"
	}
	st := portkeyState{f: portkeyFormat(ctx.RequestType)}
	c.state = &st
	if st.f != nil && isJSONObject(raw) {
		conv, err := portkeyParse(st.f, c.Direction, raw)
		if err == nil {
			c.Conversation, st.body = *conv, raw
			return c, nil
		}
		if text == nil {
			var fe *format.Error
			if errors.As(err, &fe) {
				return nil, invalid(field+".json", "%s", fe.Message)
			}
			return nil, invalid(field+".json", "the %s body cannot be read", field)
		}
	}
	if text == nil {
		return nil, invalid(field, "the hook context has neither %s.json nor %s.text", field, field)
	}
	// Only the text Portkey extracted can be screened; it cannot be
	// rewritten in a body Promptwall could not read.
	c.Conversation.Messages = []scanner.Message{{Role: role, Text: *text, Ref: "text"}}
	return c, nil
}

func portkeyParse(f format.Format, dir scanner.Direction, raw []byte) (*scanner.Conversation, error) {
	if dir == scanner.Output {
		return f.ParseResponse(raw)
	}
	req, err := f.ParseRequest(raw)
	if err != nil {
		return nil, err
	}
	return &req.Conversation, nil
}

type portkeyAnswer struct {
	Verdict         bool                `json:"verdict"`
	TransformedData *portkeyTransformed `json:"transformedData,omitempty"`
	Data            portkeyData         `json:"data"`
}

type portkeyTransformed struct {
	Request  *portkeyBody `json:"request,omitempty"`
	Response *portkeyBody `json:"response,omitempty"`
}

type portkeyBody struct {
	JSON json.RawMessage `json:"json"`
}

// portkeyData is shown in Portkey's hook_results: what was decided, why,
// and where Promptwall keeps the record.
type portkeyData struct {
	Outcome    string   `json:"outcome"`
	Reason     string   `json:"reason,omitempty"`
	Violations []string `json:"violations"`
	RecordID   string   `json:"promptwallId"`
}

func (portkey) Answer(c *Check, v Verdict) ([]byte, error) {
	st := c.state.(*portkeyState)
	a := portkeyAnswer{
		Verdict: !v.blocked(),
		Data:    portkeyData{Outcome: string(v.Outcome), Violations: v.violations(), RecordID: v.RecordID},
	}
	if v.blocked() {
		a.Data.Reason = v.Message
	}
	if v.modified() && st.body != nil {
		edits := make([]format.Edit, 0, len(v.Edits))
		for _, e := range v.Edits {
			edits = append(edits, format.Edit{Ref: e.Ref, Text: e.Text})
		}
		rewrite := st.f.RewriteRequest
		if c.Direction == scanner.Output {
			rewrite = st.f.RewriteResponse
		}
		body, err := rewrite(st.body, edits)
		if err != nil {
			return nil, err
		}
		a.TransformedData = &portkeyTransformed{}
		if c.Direction == scanner.Output {
			a.TransformedData.Response = &portkeyBody{JSON: body}
		} else {
			a.TransformedData.Request = &portkeyBody{JSON: body}
		}
	}
	return json.Marshal(a)
}
