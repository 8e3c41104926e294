package guardrail

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/promptwall/promptwall/scanner"
)

// promptSecurity is Prompt Security's POST /api/protect, called with the
// token in the APP-ID header. A prompt comes as {messages, user,
// system_prompt} (LiteLLM) or {prompt, ...} (Portkey), an answer as
// {response, user, system_prompt}; the answer is result.prompt or
// result.response with passed, action (log, block, modify), violations and,
// on modify, modified_messages or modified_text.
type promptSecurity struct{}

func (promptSecurity) Name() string { return NamePromptSecurity }

type psRequest struct {
	Messages     []map[string]json.RawMessage `json:"messages"`
	Prompt       *string                      `json:"prompt"`
	Response     *string                      `json:"response"`
	User         *string                      `json:"user"`
	SystemPrompt *string                      `json:"system_prompt"`
	UserGroups   []string                     `json:"user_groups"`
	MonitorOnly  bool                         `json:"monitor_only"`
}

// psState remembers the request's form and messages to answer modify in
// kind: the whole message list back for messages, the text for the others.
type psState struct {
	form     string
	messages []map[string]json.RawMessage
}

// Forms of a protect request, each named after its field.
const (
	psMessages = "messages"
	psPrompt   = "prompt"
	psResponse = "response"
)

func (promptSecurity) Parse(_ string, body []byte) (*Check, error) {
	var req psRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	forms := 0
	for _, given := range []bool{req.Messages != nil, req.Prompt != nil, req.Response != nil} {
		if given {
			forms++
		}
	}
	if forms != 1 {
		return nil, invalid("messages", "give exactly one of messages, prompt or response")
	}
	c := &Check{Shape: NamePromptSecurity, Direction: scanner.Input}
	c.Metadata = Metadata{Caller: NamePromptSecurity, MonitorOnly: req.MonitorOnly}
	if req.User != nil {
		c.Metadata.User = meta(*req.User)
	}
	if len(req.UserGroups) > 0 {
		c.Metadata.Extra = map[string]string{"user_groups": meta(strings.Join(req.UserGroups, ","))}
	}
	conv := &c.Conversation
	// The system prompt is context: prompt_leak compares answers with it.
	if req.SystemPrompt != nil && *req.SystemPrompt != "" {
		conv.Messages = append(conv.Messages, scanner.Message{Role: scanner.RoleSystem, Text: *req.SystemPrompt, Ref: "system_prompt"})
	}
	st := &psState{}
	c.state = st
	switch {
	case req.Prompt != nil:
		st.form = psPrompt
		conv.Messages = append(conv.Messages, scanner.Message{Role: scanner.RoleUser, Text: *req.Prompt, Ref: psPrompt})
	case req.Response != nil:
		st.form = psResponse
		c.Direction = scanner.Output
		conv.Messages = append(conv.Messages, scanner.Message{Role: scanner.RoleAssistant, Text: *req.Response, Ref: psResponse})
	default:
		st.form, st.messages = psMessages, req.Messages
		for i, m := range req.Messages {
			msgs, err := openAIMessage(m, "messages["+strconv.Itoa(i)+"]", "m"+strconv.Itoa(i))
			if err != nil {
				return nil, err
			}
			conv.Messages = append(conv.Messages, msgs...)
		}
	}
	return c, nil
}

type psResult struct {
	Passed           bool                         `json:"passed"`
	Action           string                       `json:"action"`
	Violations       []string                     `json:"violations"`
	Reason           string                       `json:"reason,omitempty"`
	ModifiedText     *string                      `json:"modified_text,omitempty"`
	ModifiedMessages []map[string]json.RawMessage `json:"modified_messages,omitempty"`
	// PromptResponseID is the Promptwall record of this screening.
	PromptResponseID string `json:"prompt_response_id"`
}

func (promptSecurity) Answer(c *Check, v Verdict) ([]byte, error) {
	st := c.state.(*psState)
	r := psResult{Passed: true, Action: "log", Violations: v.violations(), PromptResponseID: v.RecordID}
	switch {
	case v.blocked() && !c.Metadata.MonitorOnly:
		r.Passed, r.Action, r.Reason = false, "block", v.Message
	case v.modified():
		r.Action = "modify"
		if st.form == psMessages {
			msgs, err := applyOpenAIEdits(st.messages, c.Conversation, v)
			if err != nil {
				return nil, err
			}
			r.ModifiedMessages = msgs
			break
		}
		for i, m := range c.Conversation.Messages {
			if m.Ref != st.form {
				continue
			}
			text := m.Text
			if edited, ok := v.edited(i); ok {
				text = edited
			}
			r.ModifiedText = &text
		}
	}
	key := "prompt"
	if st.form == psResponse {
		key = "response"
	}
	return json.Marshal(map[string]any{
		"status": "success",
		"result": map[string]psResult{key: r},
	})
}
