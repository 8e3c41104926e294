package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// The contract: the embedded document, validated, and a router over it.
var contract = sync.OnceValues(func() (*contractDoc, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(OpenAPI)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	return &contractDoc{doc: doc, router: router}, nil
})

type contractDoc struct {
	doc    *openapi3.T
	router routers.Router
}

func loadContract(t *testing.T) *contractDoc {
	t.Helper()
	c, err := contract()
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	return c
}

// validateResponse checks one answer of the Handler against the document:
// the operation's declared statuses, headers and body schema. Answers to
// requests the document has no operation for (unknown paths, methods not
// allowed) must still be the Error shape. It also checks what the document
// states for every response: the JSON content type, the Bearer challenge
// on 401, Allow on 405, and no stack trace.
func validateResponse(t *testing.T, r *http.Request, w *httptest.ResponseRecorder) {
	t.Helper()
	c := loadContract(t)
	where := r.Method + " " + r.URL.RequestURI()
	if ct := w.Header().Get("Content-Type"); ct != jsonContentType {
		t.Errorf("%s: Content-Type %q", where, ct)
	}
	if w.Code == http.StatusUnauthorized && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("%s: 401 without a Bearer challenge", where)
	}
	if w.Code == http.StatusMethodNotAllowed && w.Header().Get("Allow") == "" {
		t.Errorf("%s: 405 without Allow", where)
	}
	if strings.Contains(w.Body.String(), "goroutine ") {
		t.Errorf("%s: stack trace in body", where)
	}
	// Validation reads the request; give it a copy with the URL a server
	// would see.
	req := r.Clone(context.Background())
	req.Body = http.NoBody
	route, pathParams, err := c.router.FindRoute(req)
	if err != nil {
		var re *routers.RouteError
		if !errors.As(err, &re) {
			t.Errorf("%s: finding the operation: %v", where, err)
			return
		}
		if w.Code < 400 {
			t.Errorf("%s: %d for an operation the document does not have", where, w.Code)
			return
		}
		var body any
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Errorf("%s: body is not JSON: %v", where, err)
			return
		}
		if err := c.doc.Components.Schemas["Error"].Value.VisitJSON(body, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("%s: %d body is not an Error: %v\n%s", where, w.Code, err, w.Body)
		}
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: pathParams, Route: route},
		Status:                 w.Code,
		Header:                 w.Header(),
		Body:                   io.NopCloser(bytes.NewReader(w.Body.Bytes())),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s: %d response does not match the document: %v\n%s", where, w.Code, err, w.Body)
	}
}
