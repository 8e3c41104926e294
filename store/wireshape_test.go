package store

import (
	"encoding/json"
	"testing"
)

// TestStoredJSONShape holds the stored JSON of the types that embed the
// spec's fields to the shape records were written in before the spec's
// fields moved into embedded structs: same keys, same order. Each document
// sets every field, so a renamed, dropped or reordered field fails.
func TestStoredJSONShape(t *testing.T) {
	tests := []struct {
		name string
		v    any
		doc  string
	}{
		{"prompt", new(Prompt), `{"id":"i","externalMetadata":"e","fromTemplate":true,"input":"in","memory":"m","orgId":"o","parentId":"pa","preserve":true,"projectId":"pr","provider":"pv","receivedAt":"2026-01-02T03:04:05.000Z","result":{"analysis":"","files":"","outcome":"","providerResult":"","response":"","scannerResults":null},"type":"scan","userId":"u","endpointId":"ep","providerId":"pi","chatId":"c","promptTemplateId":"t","scanners":"s","scannersRef":"sr"}`},
		{"chat", new(Chat), `{"id":"c","name":"n","projectId":"p","promptId":"q","promptTemplateId":"t","userId":"u","starred":true,"createdAt":"2026-01-02T03:04:05.123Z","updatedAt":"2026-01-02T03:04:06.000Z","access":{"org":true,"public":"x","users":["a"]},"orgId":"o"}`},
		{"prompt template", new(PromptTemplate), `{"id":"t","name":"n","projectId":"p","promptId":"q","userId":"u","createdAt":"2026-01-02T03:04:05.000Z","orgId":"o"}`},
		{"campaign run", new(CampaignRun), `{"id":"r","name":"n","campaignId":"c","scheduleId":"s","createdAt":"2026-01-02T03:04:05.000Z","createdBy":"u","startAt":"2026-01-02T03:04:07.000Z","status":"running","progress":0.5,"total":"","CASIScore":"12.00","attackRuns":[{"id":"a","providerId":"p","progress":1,"total":"3","errorCount":1,"attack":{"id":"x","pack":"pk","severity":3,"technique":"t","vector":"v","converters":["b64"]},"events":[{"createdAt":"2026-01-02T03:04:05.000Z","event":"queued","reason":"why"}],"results":[{"conversation":[{"role":"user","content":"hi"}],"conversationSteps":2,"converter":"b64","error":"e","errorSummary":"es","fingerprint":"f","intent":"i","intentCategory":"ic","vulnerable":true,"outcome":"vulnerable","blocked":true,"reason":"r"},{"conversation":[],"conversationSteps":0,"converter":"","error":"","errorSummary":"","fingerprint":"","intent":"","intentCategory":"","vulnerable":false,"outcome":"","blocked":false,"reason":""}],"campaignRunId":"r","index":4,"target":"provider","CASIScore":"1","stats":{"attempts":1,"vulnerable":0,"resisted":0,"blocked":0,"errors":0,"severityJudged":0,"severityResisted":0}},{"id":"empty","providerId":"","progress":0,"total":"","errorCount":0,"attack":{"id":"","pack":"","severity":0,"technique":"","vector":"","converters":[]},"events":[],"results":[],"campaignRunId":"","index":0,"target":"","CASIScore":"","stats":{"attempts":0,"vulnerable":0,"resisted":0,"blocked":0,"errors":0,"severityJudged":0,"severityResisted":0}}],"orgId":"o","completedAt":"2026-01-02T03:04:05.000Z","reason":"rr","providers":["p"],"targets":[],"attackSuccessRate":"1","blockRate":"2","stats":{"attempts":3,"vulnerable":0,"resisted":0,"blocked":0,"errors":0,"severityJudged":0,"severityResisted":0}}`},
	}
	for _, tt := range tests {
		if err := json.Unmarshal([]byte(tt.doc), tt.v); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got, err := json.Marshal(tt.v)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if string(got) != tt.doc {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.doc)
		}
	}
}
