package caddymodule

import (
	"reflect"
	"testing"
)

func TestUnmarshalGuardrail(t *testing.T) {
	tests := []struct {
		name, input, wantErr string
		want                 GuardrailHandler
	}{
		{name: "bare", input: "promptwall_guardrail", want: GuardrailHandler{}},
		{name: "shape argument", input: "promptwall_guardrail bedrock", want: GuardrailHandler{Shape: "bedrock"}},
		{
			name: "every option",
			input: `promptwall_guardrail {
				shape portkey
				endpoint support
				max_body_size 2MiB
				project proj-1
			}`,
			want: GuardrailHandler{Shape: "portkey", Endpoint: "support", MaxBodySize: 2 << 20, ProjectID: "proj-1"},
		},
		{name: "unknown shape", input: "promptwall_guardrail lakera", wantErr: `unknown shape "lakera"`},
		{name: "shape twice", input: "promptwall_guardrail litellm {\nshape portkey\n}", wantErr: "shape given twice"},
		{name: "duplicate", input: "promptwall_guardrail {\nendpoint a\nendpoint b\n}", wantErr: `duplicate sub-directive "endpoint"`},
		{name: "unknown sub-directive", input: "promptwall_guardrail {\nformat openai_chat\n}", wantErr: `unknown promptwall_guardrail sub-directive "format"`},
		{name: "bad size", input: "promptwall_guardrail {\nmax_body_size lots\n}", wantErr: "lots"},
		{name: "too many args", input: "promptwall_guardrail litellm portkey", wantErr: "wrong argument count"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := unmarshalCase[GuardrailHandler](t, tc.input, tc.wantErr)
			if g == nil {
				return
			}
			if !reflect.DeepEqual(*g, tc.want) {
				t.Errorf("got %+v, want %+v", g, tc.want)
			}
		})
	}
}
