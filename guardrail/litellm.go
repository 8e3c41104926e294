package guardrail

import (
	"encoding/json"
	"strconv"

	"github.com/promptwall/promptwall/scanner"
)

// liteLLM is LiteLLM's Generic Guardrail API. LiteLLM posts the texts it
// extracted from a call (texts, with images, tools and structured_messages
// beside them), the side of the call (input_type request or response), its
// call and trace ids and the virtual key's attribution (request_data); it
// reads action NONE, BLOCKED (with blocked_reason) or GUARDRAIL_INTERVENED
// and, when texts is present, replaces its texts with them.
type liteLLM struct{}

func (liteLLM) Name() string { return NameLiteLLM }

type liteLLMRequest struct {
	InputType          string                       `json:"input_type"`
	CallID             *string                      `json:"litellm_call_id"`
	TraceID            *string                      `json:"litellm_trace_id"`
	Texts              []string                     `json:"texts"`
	Images             []string                     `json:"images"`
	StructuredMessages []map[string]json.RawMessage `json:"structured_messages"`
	RequestData        liteLLMRequestData           `json:"request_data"`
}

// liteLLMRequestData is the virtual key's attribution. The key's hash is
// deliberately not read: it identifies a credential, not a person.
type liteLLMRequestData struct {
	Alias     *string `json:"user_api_key_alias"`
	UserID    *string `json:"user_api_key_user_id"`
	UserEmail *string `json:"user_api_key_user_email"`
	TeamID    *string `json:"user_api_key_team_id"`
	TeamAlias *string `json:"user_api_key_team_alias"`
	EndUserID *string `json:"user_api_key_end_user_id"`
	OrgID     *string `json:"user_api_key_org_id"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return meta(*p)
}

// liteLLMState counts the texts, which come first in the conversation.
type liteLLMState struct{ texts int }

func (liteLLM) Parse(_ string, body []byte) (*Check, error) {
	var req liteLLMRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	c := &Check{Shape: NameLiteLLM}
	role := scanner.RoleUser
	switch req.InputType {
	case "request":
		c.Direction = scanner.Input
	case "response":
		c.Direction, role = scanner.Output, scanner.RoleAssistant
	default:
		return nil, invalid("input_type", `input_type must be "request" or "response"`)
	}
	rd := req.RequestData
	user := str(rd.EndUserID)
	if user == "" {
		user = str(rd.UserID)
	}
	c.Metadata = Metadata{
		Caller: NameLiteLLM, User: user, KeyAlias: str(rd.Alias), Org: str(rd.OrgID),
		Team: str(rd.TeamAlias), CallID: str(req.CallID), TraceID: str(req.TraceID),
	}
	if c.Metadata.Team == "" {
		c.Metadata.Team = str(rd.TeamID)
	}
	for i, t := range req.Texts {
		c.Conversation.Messages = append(c.Conversation.Messages, scanner.Message{Role: role, Text: t, Ref: "t" + strconv.Itoa(i)})
	}
	if len(req.Texts) == 0 {
		// Without texts, the structured messages are what there is to
		// screen; they can be judged but not rewritten in this API.
		for i, m := range req.StructuredMessages {
			msgs, err := openAIMessage(m, "structured_messages["+strconv.Itoa(i)+"]", "s"+strconv.Itoa(i))
			if err != nil {
				return nil, err
			}
			c.Conversation.Messages = append(c.Conversation.Messages, msgs...)
		}
	}
	c.state = liteLLMState{texts: len(req.Texts)}
	return c, nil
}

type liteLLMResponse struct {
	Action        string   `json:"action"`
	BlockedReason string   `json:"blocked_reason,omitempty"`
	Texts         []string `json:"texts,omitempty"`
}

// LiteLLM's actions.
const (
	liteLLMNone       = "NONE"
	liteLLMBlocked    = "BLOCKED"
	liteLLMIntervened = "GUARDRAIL_INTERVENED"
)

func (liteLLM) Answer(c *Check, v Verdict) ([]byte, error) {
	st := c.state.(liteLLMState)
	r := liteLLMResponse{Action: liteLLMNone}
	switch {
	case v.blocked():
		r.Action, r.BlockedReason = liteLLMBlocked, v.Message
	case v.modified() && st.texts > 0:
		// LiteLLM replaces its texts with the list as a whole: send every
		// text, redacted or not, in the order received.
		r.Action = liteLLMIntervened
		r.Texts = make([]string, st.texts)
		for i := range st.texts {
			r.Texts[i] = c.Conversation.Messages[i].Text
			if edited, ok := v.edited(i); ok {
				r.Texts[i] = edited
			}
		}
	}
	return json.Marshal(r)
}
