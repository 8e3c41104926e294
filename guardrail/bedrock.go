package guardrail

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/promptwall/promptwall/scanner"
)

// bedrock is Amazon Bedrock's ApplyGuardrail: POST
// /guardrail/{id}/version/{version}/apply with {source: INPUT|OUTPUT,
// content: [{text: {text, qualifiers}}]}, answered with {action: NONE or
// GUARDRAIL_INTERVENED, outputs: [{text}], assessments}. LiteLLM's bedrock
// guardrail (whose endpoint is configurable) refuses a call only when an
// assessment's action is BLOCKED, and replaces its texts with outputs when
// an intervention only anonymized.
type bedrock struct{}

func (bedrock) Name() string { return NameBedrock }

// bedrockPath splits /guardrail/{id}/version/{version}/apply, under any
// prefix.
func bedrockPath(path string) (id, version string, ok bool) {
	rest, found := strings.CutSuffix(path, "/apply")
	if !found {
		return "", "", false
	}
	i := strings.LastIndex(rest, "/guardrail/")
	if i < 0 {
		return "", "", false
	}
	id, version, ok = strings.Cut(rest[i+len("/guardrail/"):], "/version/")
	if !ok || id == "" || version == "" || strings.Contains(id, "/") || strings.Contains(version, "/") {
		return "", "", false
	}
	return id, version, true
}

type bedrockRequest struct {
	Source  string `json:"source"`
	Content []struct {
		Text *struct {
			Text       string   `json:"text"`
			Qualifiers []string `json:"qualifiers"`
		} `json:"text"`
	} `json:"content"`
}

// bedrockState remembers which content items carried text, in order.
type bedrockState struct{ texts int }

func (bedrock) Parse(path string, body []byte) (*Check, error) {
	id, version, _ := bedrockPath(path)
	var req bedrockRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	c := &Check{Shape: NameBedrock, Metadata: Metadata{Caller: NameBedrock, Guardrail: meta(id), Version: meta(version)}}
	role := scanner.RoleUser
	switch req.Source {
	case "INPUT":
		c.Direction = scanner.Input
	case "OUTPUT":
		c.Direction, role = scanner.Output, scanner.RoleAssistant
	default:
		return nil, invalid("source", `source must be "INPUT" or "OUTPUT"`)
	}
	for i, item := range req.Content {
		if item.Text == nil {
			// Images are not screened by this guardrail.
			continue
		}
		r := role
		for _, q := range item.Text.Qualifiers {
			if q == "grounding_source" {
				// Reference material for grounding checks: context,
				// like a system prompt.
				r = scanner.RoleSystem
			}
		}
		c.Conversation.Messages = append(c.Conversation.Messages, scanner.Message{Role: r, Text: item.Text.Text, Ref: "c" + strconv.Itoa(i)})
	}
	c.state = bedrockState{texts: len(c.Conversation.Messages)}
	return c, nil
}

type bedrockOutput struct {
	Text string `json:"text"`
}

type bedrockResponse struct {
	Action       string              `json:"action"`
	ActionReason string              `json:"actionReason,omitempty"`
	Outputs      []bedrockOutput     `json:"outputs"`
	Assessments  []bedrockAssessment `json:"assessments"`
}

// bedrockAssessment reports detections as Bedrock's policies do: detectors
// of secrets and personal data as sensitive-information regexes, the rest
// as denied topics, each named after the scanner. The matched text is never
// included.
type bedrockAssessment struct {
	TopicPolicy                *bedrockTopicPolicy     `json:"topicPolicy,omitempty"`
	SensitiveInformationPolicy *bedrockSensitivePolicy `json:"sensitiveInformationPolicy,omitempty"`
}

type bedrockTopicPolicy struct {
	Topics []bedrockTopic `json:"topics"`
}

type bedrockTopic struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Action string `json:"action"`
}

type bedrockSensitivePolicy struct {
	Regexes []bedrockRegex `json:"regexes"`
}

type bedrockRegex struct {
	Name   string `json:"name"`
	Action string `json:"action"`
}

// bedrockAction is Bedrock's word for what a scanner did.
func bedrockAction(o scanner.Outcome) string {
	switch o {
	case scanner.Blocked:
		return "BLOCKED"
	case scanner.Modified:
		return "ANONYMIZED"
	}
	return "NONE"
}

func (bedrock) Answer(c *Check, v Verdict) ([]byte, error) {
	st := c.state.(bedrockState)
	r := bedrockResponse{Action: "NONE", Outputs: []bedrockOutput{}, Assessments: []bedrockAssessment{}}
	var a bedrockAssessment
	for _, d := range v.Detections {
		action := bedrockAction(d.Outcome)
		switch d.Type {
		case "secret", "pii", "sensitive_output":
			if a.SensitiveInformationPolicy == nil {
				a.SensitiveInformationPolicy = &bedrockSensitivePolicy{}
			}
			a.SensitiveInformationPolicy.Regexes = append(a.SensitiveInformationPolicy.Regexes, bedrockRegex{Name: d.Scanner, Action: action})
		default:
			if a.TopicPolicy == nil {
				a.TopicPolicy = &bedrockTopicPolicy{}
			}
			a.TopicPolicy.Topics = append(a.TopicPolicy.Topics, bedrockTopic{Name: d.Scanner, Type: "DENY", Action: action})
		}
	}
	if len(v.Detections) > 0 {
		r.Assessments = append(r.Assessments, a)
	}
	switch {
	case v.blocked():
		r.Action, r.ActionReason = "GUARDRAIL_INTERVENED", "Guardrail blocked."
		r.Outputs = append(r.Outputs, bedrockOutput{Text: v.Message})
	case v.modified():
		// One output per text item, in order, so the caller can put each
		// anonymized text back where it came from.
		r.Action, r.ActionReason = "GUARDRAIL_INTERVENED", "Guardrail masked."
		for i := range st.texts {
			text := c.Conversation.Messages[i].Text
			if edited, ok := v.edited(i); ok {
				text = edited
			}
			r.Outputs = append(r.Outputs, bedrockOutput{Text: text})
		}
	}
	return json.Marshal(r)
}
