package api

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// OpenAPI is the OpenAPI 3.1 document of the API, served at GET
// /backend/v1/openapi.json. It is authenticated like every operation
// (every operation requires bearer authentication),
// and it is also the source of the request checks every route shares: the
// parameters an operation accepts, their types and bounds, and the roles
// it admits are read from here, so a route added to the document and to
// the mux inherits them without code, and the document cannot describe
// checks the server does not make. The contract tests validate every
// response against it.
//
//go:embed openapi.json
var OpenAPI []byte

// codeUnsupportedMedia is the error code of a 415.
const codeUnsupportedMedia = "unsupported_media_type"

// compiledSpec parses the embedded document once per process.
var compiledSpec = sync.OnceValues(func() (*apiSpec, error) { return loadSpec(OpenAPI) })

// checkDocumented applies the document's checks to a routed request. A
// route the document does not describe gets none (its handler validates
// alone); the contract tests make sure every route is described.
func (h *Handler) checkDocumented(w http.ResponseWriter, r *http.Request, p Principal) *apiError {
	spec, err := compiledSpec()
	if err != nil {
		return internal(err)
	}
	op, names := spec.operation(r)
	if op == nil {
		return nil
	}
	if op.deprecated {
		// RFC 9745 in its final form: "@" and the Unix time since which
		// the operation is deprecated (the drafts' "true" is obsolete),
		// and a Link with rel="deprecation" to the document describing
		// it. Set here, so errors carry them too.
		w.Header().Set("Deprecation", fmt.Sprintf("@%d", deprecatedSince.Unix()))
		w.Header().Set("Link", `</backend/v1/openapi.json>; rel="deprecation"; type="application/json"`)
	}
	return op.check(r, p, names)
}

// deprecatedSince is when the operations the document marks deprecated
// (GET /backend/v1/endpoint) count as deprecated.
var deprecatedSince = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// apiSpec is the part of the document the request checks need, compiled
// once.
type apiSpec struct {
	// ops is keyed by method and path skeleton ("GET /backend/v1/prompts/{}").
	ops map[string]*operation
}

type operation struct {
	query map[string]*paramSpec
	// path holds the path parameters in the order of the path.
	path       []*paramSpec
	roles      []string
	body       bool
	deprecated bool
}

type paramSpec struct {
	name   string
	array  bool
	schema schemaSpec
}

type schemaSpec struct {
	Type      string      `json:"type"`
	Format    string      `json:"format"`
	Minimum   *float64    `json:"minimum"`
	Maximum   *float64    `json:"maximum"`
	MinLength *int        `json:"minLength"`
	Enum      []string    `json:"enum"`
	Items     *schemaSpec `json:"items"`
}

type docParam struct {
	Ref    string     `json:"$ref"`
	Name   string     `json:"name"`
	In     string     `json:"in"`
	Schema schemaSpec `json:"schema"`
}

type docOperation struct {
	Parameters  []docParam      `json:"parameters"`
	RequestBody json.RawMessage `json:"requestBody"`
	Roles       []string        `json:"x-promptwall-roles"`
	Deprecated  bool            `json:"deprecated"`
}

var wildcard = regexp.MustCompile(`\{[^}]*\}`)

// skeleton replaces the names of path wildcards, so that a route
// registered as /campaigns/{id}/runs matches the document's
// /campaigns/{campaignId}/runs.
func skeleton(path string) string { return wildcard.ReplaceAllString(path, "{}") }

func loadSpec(doc []byte) (*apiSpec, error) {
	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Parameters map[string]docParam `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("api: openapi.json: %w", err)
	}
	spec := &apiSpec{ops: make(map[string]*operation)}
	for path, methods := range d.Paths {
		names := wildcard.FindAllString(path, -1)
		for method, raw := range methods {
			var do docOperation
			if err := json.Unmarshal(raw, &do); err != nil {
				return nil, fmt.Errorf("api: openapi.json: %s %s: %w", method, path, err)
			}
			op := &operation{query: make(map[string]*paramSpec), path: make([]*paramSpec, len(names)), roles: do.Roles, body: do.RequestBody != nil, deprecated: do.Deprecated}
			for _, p := range do.Parameters {
				if p.Ref != "" {
					rp, ok := d.Components.Parameters[strings.TrimPrefix(p.Ref, "#/components/parameters/")]
					if !ok {
						return nil, fmt.Errorf("api: openapi.json: %s %s: unresolved %s", method, path, p.Ref)
					}
					p = rp
				}
				ps := &paramSpec{name: p.Name, array: p.Schema.Type == "array", schema: p.Schema}
				switch p.In {
				case "query":
					op.query[p.Name] = ps
				case "path":
					i := slices.Index(names, "{"+p.Name+"}")
					if i < 0 {
						return nil, fmt.Errorf("api: openapi.json: %s %s: path parameter %s not in the path", method, path, p.Name)
					}
					op.path[i] = ps
				}
			}
			spec.ops[strings.ToUpper(method)+" "+skeleton(path)] = op
		}
	}
	return spec, nil
}

// operation returns the documented operation the mux routed r to, or nil
// for a route the document does not describe (it then gets no shared
// checks beyond authentication).
func (s *apiSpec) operation(r *http.Request) (*operation, []string) {
	method, path, ok := strings.Cut(r.Pattern, " ")
	if !ok {
		return nil, nil
	}
	names := wildcard.FindAllString(path, -1)
	for i, n := range names {
		names[i] = strings.Trim(n, "{}.")
	}
	return s.ops[method+" "+skeleton(path)], names
}

// check applies the document's rules for r's operation: the caller's
// role, the path parameters, the query string and the body's media type.
func (op *operation) check(r *http.Request, p Principal, pathNames []string) *apiError {
	if len(op.roles) > 0 && !slices.Contains(op.roles, p.Role) {
		return &apiError{status: http.StatusForbidden, code: CodeForbidden,
			message: "this operation needs one of the roles " + strings.Join(op.roles, ", ")}
	}
	for i, ps := range op.path {
		if ps == nil || i >= len(pathNames) {
			continue
		}
		if aerr := ps.schema.checkValue(ps.name, r.PathValue(pathNames[i])); aerr != nil {
			return aerr
		}
	}
	vals, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return badParam("", "malformed query string")
	}
	// Sorted, so the same bad request always names the same parameter.
	names := make([]string, 0, len(vals))
	for n := range vals {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ps, ok := op.query[n]
		switch {
		case !ok:
			return badParam(n, "unknown parameter %s", n)
		case !ps.array && len(vals[n]) > 1:
			return badParam(n, "parameter %s may be given only once", n)
		}
		sch := &ps.schema
		if ps.array && sch.Items != nil {
			sch = sch.Items
		}
		for _, v := range vals[n] {
			if aerr := sch.checkValue(n, v); aerr != nil {
				return aerr
			}
		}
	}
	if op.body && r.ContentLength != 0 {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			return &apiError{status: http.StatusUnsupportedMediaType, code: codeUnsupportedMedia,
				message: "the request body must be application/json"}
		}
	}
	return nil
}

// checkValue checks one textual value against a parameter schema.
func (s *schemaSpec) checkValue(name, v string) *apiError {
	switch s.Type {
	case "boolean":
		if v != "true" && v != "false" {
			return badParam(name, "%s must be true or false", name)
		}
	case "integer":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || (s.Minimum != nil && float64(n) < *s.Minimum) || (s.Maximum != nil && float64(n) > *s.Maximum) {
			switch {
			case s.Minimum != nil && s.Maximum != nil:
				return badParam(name, "%s must be an integer from %v to %v", name, *s.Minimum, *s.Maximum)
			default:
				return badParam(name, "%s must be an integer", name)
			}
		}
	case "string":
		if s.MinLength != nil && len(v) < *s.MinLength {
			return badParam(name, "%s must not be empty", name)
		}
		switch s.Format {
		case "uuid":
			// uuid.Parse also takes urn:uuid:, braces and bare hex; the
			// API takes the canonical form only.
			if _, err := uuid.Parse(v); err != nil || len(v) != 36 {
				return badParam(name, "%s must be a UUID", name)
			}
		case "date-time":
			if _, err := time.Parse(time.RFC3339, v); err != nil {
				return badParam(name, "%s must be an RFC 3339 time such as 2026-11-22T10:04:05.123Z", name)
			}
		}
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, v) {
			return badParam(name, "%s must be one of %s", name, strings.Join(s.Enum, ", "))
		}
	}
	return nil
}

// serveOpenAPI serves GET /backend/v1/openapi.json.
func (h *Handler) serveOpenAPI(w http.ResponseWriter, _ *http.Request, _ Principal) *apiError {
	w.Header().Set("Content-Type", jsonContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(OpenAPI)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(OpenAPI)
	return nil
}
