package format

import (
	"errors"
	"fmt"
	"io"

	"github.com/promptwall/promptwall/scanner"
)

// GenericConfig describes a JSON API that no built-in format covers, by
// the paths of its texts. Paths use the ref syntax (see Edit), without
// '#', plus [*] for every element of an array: "messages[*].content", "input",
// "choices[0].message.content". A path that names an object or an array
// screens every string below it, so nothing under a configured path goes
// unscreened.
type GenericConfig struct {
	// Request lists the paths of the request's texts, screened as user
	// text. At least one is required.
	Request []string `json:"request,omitempty"`
	// System lists request paths screened as system text.
	System []string `json:"system,omitempty"`
	// Response lists the paths of the answer's texts. The first one also
	// shapes the answer Completion renders.
	Response []string `json:"response,omitempty"`
	// Model is the path of the model name, if the body has one.
	Model string `json:"model,omitempty"`
	// Stream is the path of a boolean that asks for a streamed answer.
	// Streamed answers of a generic API cannot be decoded; the handler
	// should refuse or pass them through.
	Stream string `json:"stream,omitempty"`
}

type generic struct {
	request, system, response [][]segment
	model, stream             []segment
	answer                    []segment
}

// NewGeneric compiles a generic format. Its errors name the bad path.
func NewGeneric(cfg GenericConfig) (Format, error) {
	if len(cfg.Request) == 0 {
		return nil, errors.New("format: generic: at least one request path is required")
	}
	g := &generic{}
	compile := func(list []string) ([][]segment, error) {
		var out [][]segment
		for _, p := range list {
			segs, err := parsePath(p, true)
			if err != nil {
				return nil, fmt.Errorf("format: generic: %w", err)
			}
			if len(segs) == 0 {
				return nil, fmt.Errorf("format: generic: empty path")
			}
			out = append(out, segs)
		}
		return out, nil
	}
	var err error
	if g.request, err = compile(cfg.Request); err != nil {
		return nil, err
	}
	if g.system, err = compile(cfg.System); err != nil {
		return nil, err
	}
	if g.response, err = compile(cfg.Response); err != nil {
		return nil, err
	}
	for _, p := range []struct {
		s   string
		dst *[]segment
	}{{cfg.Model, &g.model}, {cfg.Stream, &g.stream}} {
		if p.s == "" {
			continue
		}
		segs, err := parsePath(p.s, false)
		if err != nil {
			return nil, fmt.Errorf("format: generic: %w", err)
		}
		*p.dst = segs
	}
	if len(g.response) > 0 {
		// The rendered answer follows the first response path, with
		// index 0 where it has a wildcard.
		for _, s := range g.response[0] {
			if s.idx == segWild {
				s.idx = 0
			}
			g.answer = append(g.answer, s)
		}
	}
	return g, nil
}

func (*generic) Name() string { return NameGeneric }

func (g *generic) collect(c *collector, top span, paths [][]segment, role scanner.Role) error {
	for _, segs := range paths {
		err := match(&c.doc, top, segs, nil, func(path []byte, v span) error {
			c.path = append(c.path[:0], path...)
			return c.leaves(role, v)
		})
		if err != nil {
			if e, ok := err.(*Error); ok {
				e.Status = c.status
			}
			return err
		}
	}
	c.path = c.path[:0]
	return nil
}

func (g *generic) ParseRequest(body []byte) (*Request, error) {
	c, top, err := begin(body, 400)
	if err != nil {
		return nil, err
	}
	if err := g.collect(c, top, g.system, scanner.RoleSystem); err != nil {
		return nil, err
	}
	if err := g.collect(c, top, g.request, scanner.RoleUser); err != nil {
		return nil, err
	}
	var model textOffs
	if g.model != nil {
		if v, ok := lookup(&c.doc, top, g.model); ok && c.b[v.s] == '"' {
			model.ts, model.te = c.str(v)
		}
	}
	stream := false
	if g.stream != nil {
		if v, ok := lookup(&c.doc, top, g.stream); ok {
			stream = c.b[v.s] == 't'
		}
	}
	return c.finish(model, stream), nil
}

func (g *generic) RewriteRequest(body []byte, edits []Edit) ([]byte, error) {
	return rewrite(body, edits)
}

func (g *generic) ParseResponse(body []byte) (*scanner.Conversation, error) {
	c, top, err := begin(body, 502)
	if err != nil {
		return nil, err
	}
	if err := g.collect(c, top, g.response, scanner.RoleAssistant); err != nil {
		return nil, err
	}
	conv := c.conversation()
	return &conv, nil
}

func (g *generic) RewriteResponse(body []byte, edits []Edit) ([]byte, error) {
	return rewrite(body, edits)
}

// Blocked renders the gateway's own error shape (the /backend/v1 API's):
// a generic API has no error shape Promptwall could know.
func (g *generic) Blocked(_ int, code, message string) []byte {
	type body struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	return marshal(struct {
		Error body `json:"error"`
	}{body{code, message}})
}

// Completion renders {"<first response path>": message} with the nesting
// the path describes (index 0 for [*]), or nil without response paths.
func (g *generic) Completion(_ *Request, message string) []byte {
	if len(g.answer) == 0 {
		return nil
	}
	out := appendQuote(nil, message)
	for i := len(g.answer) - 1; i >= 0; i-- {
		s := g.answer[i]
		var w []byte
		if s.idx == segKey {
			w = append(appendQuote(append(w, '{'), s.key), ':')
			w = append(append(w, out...), '}')
		} else {
			w = append(w, '[')
			for range s.idx {
				w = append(w, "null,"...)
			}
			w = append(append(w, out...), ']')
		}
		out = w
	}
	return out
}

func (*generic) StreamCompletion(*Request, string) []byte { return nil }
func (*generic) NewStream(io.Reader) Stream               { return nil }
