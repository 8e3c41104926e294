package guardrail

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/promptwall/promptwall/scanner"
)

// roleOf maps an OpenAI-style role onto the engine's; a role the engine
// does not know is screened as the user's, the strictest reading.
func roleOf(role string) scanner.Role {
	switch role {
	case "system", "developer":
		return scanner.RoleSystem
	case "assistant", "model":
		return scanner.RoleAssistant
	case "tool", "function":
		return scanner.RoleTool
	}
	return scanner.RoleUser
}

// openAIMessage extracts the texts of one OpenAI chat message: its content
// when a string, else the text of each content part. ref locates the
// message for applyOpenAIEdits ("m3", parts "m3.p1"); param names it in
// errors.
func openAIMessage(m map[string]json.RawMessage, param, ref string) ([]scanner.Message, error) {
	var role string
	if raw, ok := m["role"]; ok {
		if err := json.Unmarshal(raw, &role); err != nil {
			return nil, invalid(param+".role", "role must be a string")
		}
	}
	r := roleOf(role)
	raw := bytes.TrimSpace(m["content"])
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil, nil
	case raw[0] == '"':
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, invalid(param+".content", "content is not a valid JSON string")
		}
		return []scanner.Message{{Role: r, Text: text, Ref: ref}}, nil
	case raw[0] == '[':
		var parts []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &parts); err != nil {
			return nil, invalid(param+".content", "content must be a string or an array of content parts")
		}
		var out []scanner.Message
		for j, p := range parts {
			textRaw, ok := p["text"]
			if !ok {
				// Images and files carry no text to screen here.
				continue
			}
			var text string
			if err := json.Unmarshal(textRaw, &text); err != nil {
				return nil, invalid(fmt.Sprintf("%s.content[%d].text", param, j), "text must be a string")
			}
			out = append(out, scanner.Message{Role: r, Text: text, Ref: ref + ".p" + strconv.Itoa(j)})
		}
		return out, nil
	}
	return nil, invalid(param+".content", "content must be a string or an array of content parts")
}

// applyOpenAIEdits returns msgs with the verdict's redactions written into
// the contents they came from; every other field is kept as sent. msgs is
// not changed.
func applyOpenAIEdits(msgs []map[string]json.RawMessage, conv scanner.Conversation, v Verdict) ([]map[string]json.RawMessage, error) {
	out := make([]map[string]json.RawMessage, len(msgs))
	copy(out, msgs)
	for _, e := range v.Edits {
		if e.Message < 0 || e.Message >= len(conv.Messages) {
			continue
		}
		ref := conv.Messages[e.Message].Ref
		msgRef, partRef, hasPart := strings.Cut(ref, ".p")
		if !strings.HasPrefix(msgRef, "m") {
			// Context the caller sent beside the messages (a system
			// prompt) is screened, not handed back.
			continue
		}
		i, err := strconv.Atoi(msgRef[1:])
		if err != nil || i < 0 || i >= len(out) {
			return nil, fmt.Errorf("guardrail: edit names no message: %q", ref)
		}
		m := make(map[string]json.RawMessage, len(out[i]))
		for k, val := range out[i] {
			m[k] = val
		}
		text, _ := json.Marshal(e.Text)
		if !hasPart {
			m["content"] = text
		} else {
			j, err := strconv.Atoi(partRef)
			var parts []map[string]json.RawMessage
			if err == nil {
				err = json.Unmarshal(m["content"], &parts)
			}
			if err != nil || j < 0 || j >= len(parts) {
				return nil, fmt.Errorf("guardrail: edit names no content part: %q", ref)
			}
			part := make(map[string]json.RawMessage, len(parts[j]))
			for k, val := range parts[j] {
				part[k] = val
			}
			part["text"] = text
			parts[j] = part
			if m["content"], err = json.Marshal(parts); err != nil {
				return nil, err
			}
		}
		out[i] = m
	}
	return out, nil
}
