package store

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// marshalNormalized is what appendPromptJSON must reproduce: encoding/json's
// output for the record after Normalize, leaving p itself untouched.
func marshalNormalized(t *testing.T, p *Prompt) ([]byte, error) {
	t.Helper()
	cp := *p
	if cp.Result.ScannerResults != nil {
		cp.Result.ScannerResults = append([]ScannerResult(nil), cp.Result.ScannerResults...)
	}
	cp.Result.Normalize()
	return json.Marshal(&cp)
}

// trickyStrings exercise every branch of the string escaper: HTML
// characters, every short escape, other control characters, the two line
// separators JavaScript chokes on, multi-byte runes and invalid UTF-8.
var trickyStrings = []string{
	"",
	"plain ascii",
	`quote " backslash \ slash /`,
	"<script>alert('x')</script> & more",
	"\b\f\n\r\t",
	"\x00\x01\x1f\x7f",
	"line\u2028para\u2029end",
	"héllo wörld 日本語 🙂",
	"bad \xff utf8 \xc3",
	"\xe2\x80",
	"trailing \\",
	`{"id":"chatcmpl-1","choices":[{"message":{"content":"hi"}}]}`,
}

func TestAppendPromptJSON(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 4, 5, 123456789, time.FixedZone("CET", 3600))
	cases := []struct {
		name string
		p    Prompt
	}{
		{"zero", Prompt{}},
		{"nil and empty slices", Prompt{
			PromptFields: PromptFields{ID: "a",
				Result: PromptResult{ScannerResults: []ScannerResult{
					{Data: ScannerData{Matches: nil, Findings: []Finding{}}},
					{Data: ScannerData{Matches: [][2]int{}}},
				}}},
		}},
		{"empty results", Prompt{PromptFields: PromptFields{ID: "a", Result: PromptResult{ScannerResults: []ScannerResult{}}}}},
		{"full", Prompt{
			PromptFields: PromptFields{ID: "0193-abc", ExternalMetadata: `{"k":"<v>"}`, FromTemplate: true, Input: "masked ****",
				Memory: "m", OrgID: "org", ParentID: "p", Preserve: true, ProjectID: "proj", Provider: "OpenAI",
				ReceivedAt: Timestamp(at), Type: TypePrompt, UserID: "u",
				Result: PromptResult{
					Analysis: "a", Files: "f", Outcome: "blocked", ProviderResult: "upstream error: \"x\"\n", Response: "r",
					ScannerResults: []ScannerResult{{
						CompletedDate: Timestamp(at.Add(time.Millisecond)), CustomConfig: true, StartedDate: Timestamp(at),
						Outcome: "blocked", ScanDirection: "input", ScannerID: "secrets", ScannerVersionMeta: "1",
						Data: ScannerData{
							Type: "secret", Matches: [][2]int{{0, 4}, {-1, 1 << 40}}, Reason: "AWS key", Error: "e",
							Findings: []Finding{
								{Message: 0, Role: "user", Kind: "AWS_ACCESS_KEY", Start: 0, End: 4, Score: 1},
								{Message: -3, Role: "assistant", Kind: "K", Start: 5, End: 9, Score: 0.8125},
							},
						},
					}},
				}},
			EndpointID: "e", ProviderID: "pid", ChatID: "c", PromptTemplateID: "t",
			Scanners: `[{"id":"secrets"}]`, ScannersRef: "ref",
		}},
		{"timestamp years", Prompt{
			PromptFields: PromptFields{ReceivedAt: Timestamp(time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)),
				Result: PromptResult{ScannerResults: []ScannerResult{
					{StartedDate: Timestamp(time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)), CompletedDate: Timestamp(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))},
					{StartedDate: Timestamp(time.Date(-1, 6, 15, 12, 30, 0, 5e6, time.UTC)), CompletedDate: Timestamp(time.Date(0, 2, 29, 1, 2, 3, 45e6, time.FixedZone("", -5*3600)))},
					{StartedDate: Timestamp(time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)), CompletedDate: Timestamp(time.Date(2026, 1, 1, 0, 59, 59, 999e6, time.FixedZone("", 3600)))},
				}}},
		}},
		{"float formats", Prompt{
			PromptFields: PromptFields{Result: PromptResult{ScannerResults: []ScannerResult{{Data: ScannerData{Findings: []Finding{
				{Score: 0}, {Score: math.Copysign(0, -1)}, {Score: 1e-6}, {Score: 9.99e-7}, {Score: 1e-7},
				{Score: 1e20}, {Score: 1e21}, {Score: 123456789.123}, {Score: -0.1}, {Score: 5e-324},
				{Score: math.MaxFloat64}, {Score: 1.5e-300},
			}}}}}},
		}},
	}
	for i, s := range trickyStrings {
		cases = append(cases, struct {
			name string
			p    Prompt
		}{"string " + string(rune('a'+i)), Prompt{
			PromptFields: PromptFields{ID: s, Input: s,
				Result: PromptResult{ProviderResult: s, Response: s, ScannerResults: []ScannerResult{{Data: ScannerData{Reason: s}}}}},
		}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := marshalNormalized(t, &c.p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendPromptJSON(nil, &c.p)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("appendPromptJSON differs from encoding/json\n got: %s\nwant: %s", got, want)
			}
		})
	}
}

// TestAppendPromptJSONRandom fills every field of Prompt, found by
// reflection, with random values: a field added to the record and not to
// the encoder (or encoded differently) fails here.
func TestAppendPromptJSONRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		var p Prompt
		fillRandom(t, r, reflect.ValueOf(&p).Elem())
		want, err := marshalNormalized(t, &p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendPromptJSON(nil, &p)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("record %d: appendPromptJSON differs from encoding/json\n got: %s\nwant: %s", i, got, want)
		}
	}
}

func TestAppendPromptJSONUnsupportedScore(t *testing.T) {
	for _, score := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		p := Prompt{
			PromptFields: PromptFields{Result: PromptResult{ScannerResults: []ScannerResult{{Data: ScannerData{Findings: []Finding{{Score: score}}}}}}},
		}
		_, want := marshalNormalized(t, &p)
		_, got := appendPromptJSON(nil, &p)
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("score %v: error %v, encoding/json says %v", score, got, want)
		}
	}
}

var timestampType = reflect.TypeFor[Timestamp]()

func fillRandom(t *testing.T, r *rand.Rand, v reflect.Value) {
	t.Helper()
	if v.Type() == timestampType {
		if r.IntN(4) > 0 {
			zone := time.FixedZone("", (r.IntN(48)-24)*1800)
			v.Set(reflect.ValueOf(Timestamp(time.Unix(r.Int64N(5e9)-1e9, r.Int64N(1e9)).In(zone))))
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		if r.IntN(2) == 0 {
			v.SetString(trickyStrings[r.IntN(len(trickyStrings))])
			return
		}
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		v.SetString(string(b))
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int:
		v.SetInt(r.Int64N(1<<40) - 1<<39)
	case reflect.Float64:
		v.SetFloat(math.Float64frombits(r.Uint64()))
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) || r.IntN(2) == 0 {
			v.SetFloat(r.Float64())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fillRandom(t, r, v.Field(i))
		}
	case reflect.Slice:
		switch n := r.IntN(4); n {
		case 0:
			// nil
		default:
			v.Set(reflect.MakeSlice(v.Type(), n-1, n-1))
			for i := range v.Len() {
				fillRandom(t, r, v.Index(i))
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			fillRandom(t, r, v.Index(i))
		}
	default:
		t.Fatalf("no random filler for %s: extend fillRandom and appendPromptJSON", v.Type())
	}
}
