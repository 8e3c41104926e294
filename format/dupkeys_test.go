package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secretValue is what an attacker hides under a case-variant key.
const secretValue = `[{"role":"user","content":"AKIAZ7VRSQ4LMXWB2PEH"}]`

func TestCaseVariantKeysRefused(t *testing.T) {
	cases := []struct {
		name, body, param string
	}{
		{"top level, variant last", `{"model":"m","messages":[{"role":"user","content":"hi"}],"Messages":` + secretValue + `}`, "Messages"},
		{"top level, variant first", `{"MESSAGES":` + secretValue + `,"model":"m","messages":[{"role":"user","content":"hi"}]}`, "messages"},
		{"escaped variant", `{"model":"m","messages":[{"role":"user","content":"hi"}],"\u004Dessages":` + secretValue + `}`, "Messages"},
		{"nested in a message", `{"model":"m","messages":[{"role":"user","content":"hi","Content":"AKIAZ7VRSQ4LMXWB2PEH"}]}`, "messages[0].Content"},
		{"role variant", `{"model":"m","messages":[{"role":"system","ROLE":"user","content":"hi"}]}`, "messages[0].ROLE"},
		{"Kelvin sign folds to k", `{"model":"m","messages":[{"role":"user","content":"hi"}],"mas\u212Aed":1,"masked":2}`, "masked"},
		{"long s folds to s", `{"model":"m","messages":[{"role":"user","content":"hi"}],"ſtream":true,"stream":false}`, "stream"},
		{"unscreened field", `{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":{"a":1,"A":2}}`, "metadata.A"},
		{"inside tool arguments", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{\"q\":\"x\",\"Q\":\"AKIAZ7VRSQ4LMXWB2PEH\"}"}}]}]}`, "messages[0].tool_calls[0].function.arguments#Q"},
	}
	f, err := ByName(NameOpenAIChat)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.ParseRequest([]byte(tc.body))
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("accepted or wrong error type: %v", err)
			}
			if fe.Status != 400 || fe.Code != "invalid_request" || fe.Param != tc.param || !strings.Contains(fe.Message, "duplicate key") {
				t.Fatalf("got %+v, want 400 invalid_request at %q", fe, tc.param)
			}
		})
	}
}

// Keys that merely look alike are not duplicates.
func TestDistinctKeysAccepted(t *testing.T) {
	for _, body := range []string{
		`{"a":1,"b":2,"ab":3,"a_":4,"é":5,"e":6}`,
		`{"x":{"a":1},"y":{"a":1},"z":[{"a":1},{"a":1}]}`,
		// Many keys take the map path.
		`{` + manyKeys(40) + `}`,
	} {
		if err := validate([]byte(body)); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
	if err := validate([]byte(`{` + manyKeys(40) + `,"K7":1}`)); err == nil {
		t.Error("a case variant among many keys was accepted")
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + string(rune('0'+i%10)) + strings.Repeat("x", i/10) + `":0`)
	}
	return b.String()
}

// Every object of every valid fixture of every format, given a case
// variant of one of its keys (first or last in the object), is refused by
// that format with the variant's path.
func TestCaseVariantAtEveryLevel(t *testing.T) {
	dirs, err := os.ReadDir("testdata/requests")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, d := range dirs {
		f := detect(t, d.Name())
		files, _ := filepath.Glob(filepath.Join("testdata/requests", d.Name(), "*.json"))
		for _, file := range files {
			if strings.HasPrefix(filepath.Base(file), "err_") {
				continue
			}
			body, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, variant := range caseVariants(t, body) {
				checked++
				_, err := f.ParseRequest(variant)
				var fe *Error
				if !errors.As(err, &fe) || fe.Status != 400 || !strings.Contains(fe.Message, "duplicate key") {
					t.Errorf("%s: %s accepted (or refused otherwise: %v):\n%s", d.Name(), filepath.Base(file), err, variant)
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d variants checked: the fixtures went missing", checked)
	}
}

// caseVariants returns body with, for each object and each of its keys
// that has letters, that key's case variant added first and last.
func caseVariants(t *testing.T, body []byte) [][]byte {
	d, err := parse(body, nil)
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	var out [][]byte
	for i, n := range d.tape {
		if body[n.s] != '{' || n.next == i+1 {
			continue
		}
		v := span{n.s, n.e, i}
		for k := range d.members(v) {
			key := string(d.unquote(k))
			alt := swapCase(key)
			if alt == key {
				continue
			}
			member := string(appendQuote(nil, alt)) + `:"AKIAZ7VRSQ4LMXWB2PEH"`
			first := string(body[:n.s+1]) + member + "," + string(body[n.s+1:])
			last := string(body[:n.e-1]) + "," + member + string(body[n.e-1:])
			out = append(out, []byte(first), []byte(last))
		}
	}
	return out
}

func swapCase(s string) string {
	if u := strings.ToUpper(s); u != s {
		return u
	}
	return strings.ToLower(s)
}

// FuzzCaseVariantKeys holds the rule to encoding/json's own matching: a
// document the parser accepts has no object in which encoding/json would
// match two keys to one field, and adding a case variant of any key of an
// accepted document gets it refused.
func FuzzCaseVariantKeys(f *testing.F) {
	files, _ := filepath.Glob("testdata/requests/*/*.json")
	for i, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b, uint(i))
		}
	}
	f.Add([]byte(`{"a":{"B":1,"c":[{"d":1}]}}`), uint(3))
	f.Fuzz(func(t *testing.T, b []byte, pick uint) {
		d, err := parse(b, nil)
		if err != nil {
			return
		}
		if k, ok := foldedPair(b); ok {
			t.Fatalf("accepted an object where encoding/json matches %q twice", k)
		}
		var objs []int
		for i, n := range d.tape {
			if b[n.s] == '{' && n.next > i+1 {
				objs = append(objs, i)
			}
		}
		if len(objs) == 0 {
			return
		}
		i := objs[pick%uint(len(objs))]
		n := d.tape[i]
		k := d.tape[i+1]
		key := string(d.unquote(span{k.s, k.e, i + 1}))
		alt := swapCase(key)
		if alt == key {
			return
		}
		mutated := bytes.Join([][]byte{b[:n.e-1], []byte(","), appendQuote(nil, alt), []byte(":0"), b[n.e-1:]}, nil)
		if _, err := parse(mutated, nil); !errors.As(err, new(*DuplicateKeyError)) {
			t.Fatalf("a case variant of %q was not refused as a duplicate (%v):\n%s", key, err, mutated)
		}
	})
}

// foldedPair walks b with encoding/json's tokenizer and returns a key that
// two members of one object share under case folding.
func foldedPair(b []byte) (string, bool) {
	type frame struct {
		obj, wantKey bool
		keys         []string
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var stack []*frame
	valueDone := func() {
		if len(stack) > 0 && stack[len(stack)-1].obj {
			stack[len(stack)-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF || err != nil {
			return "", false
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				stack = append(stack, &frame{obj: v == '{', wantKey: v == '{'})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			if top := len(stack) - 1; top >= 0 && stack[top].obj && stack[top].wantKey {
				for _, k := range stack[top].keys {
					if strings.EqualFold(k, v) {
						return v, true
					}
				}
				stack[top].keys = append(stack[top].keys, v)
				stack[top].wantKey = false
				continue
			}
			valueDone()
		default:
			valueDone()
		}
	}
}

// A body that is valid JSON but not an object is refused in every format
// with a message naming what it got.
func TestNonObjectBodiesRefused(t *testing.T) {
	formats := map[string]Format{}
	for _, name := range []string{NameOpenAIChat, NameOpenAIResponses, NameOpenAICompletions, NameOpenAIEmbeddings,
		NameAnthropicMessages, NameGemini, NameOllamaChat, NameOllamaGenerate} {
		f, err := ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		formats[name] = f
	}
	g, err := NewGeneric(GenericConfig{Request: []string{"prompt"}})
	if err != nil {
		t.Fatal(err)
	}
	formats[NameGeneric] = g
	bodies := []struct{ body, got string }{
		{`[{"model":"m","messages":[{"role":"user","content":"hi"}]}]`, "an array"},
		{`"hello"`, "a string"},
		{`42`, "a number"},
		{`null`, "null"},
	}
	for name, f := range formats {
		for _, b := range bodies {
			t.Run(name+"/"+b.got, func(t *testing.T) {
				_, err := f.ParseRequest([]byte(b.body))
				var fe *Error
				if !errors.As(err, &fe) {
					t.Fatalf("accepted or wrong error type: %v", err)
				}
				if want := "body must be a JSON object, got " + b.got; fe.Status != 400 || fe.Message != want {
					t.Fatalf("got %d %q, want 400 %q", fe.Status, fe.Message, want)
				}
			})
		}
	}
}
