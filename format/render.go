package format

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// now and newID are the clock and id source of rendered answers; tests
// replace them so golden files are stable.
var (
	now   = time.Now
	newID = func() string { return strings.ToLower(rand.Text()) }
)

// marshal encodes v without HTML escaping: the bodies go to API clients,
// and "<" in a flag message should read as "<".
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only plain structs, strings and numbers are rendered; failure
		// is a programming error.
		panic("format: render: " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// openAIErrorType maps a status to the "type" OpenAI uses for it.
func openAIErrorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

type openAIError struct {
	Error openAIErrorBody `json:"error"`
}

type openAIErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

// openAIBlocked is the error body of every OpenAI format: the SDKs raise
// APIStatusError subclasses carrying error.message and error.code.
func openAIBlocked(status int, code, message string) []byte {
	return marshal(openAIError{openAIErrorBody{Message: message, Type: openAIErrorType(status), Code: code}})
}

// anthropicErrorType maps a status to Anthropic's error types.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

type anthropicError struct {
	Type  string             `json:"type"`
	Error anthropicErrorBody `json:"error"`
}

type anthropicErrorBody struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func anthropicBlocked(status int, message string) []byte {
	return marshal(anthropicError{"error", anthropicErrorBody{anthropicErrorType(status), message}})
}

// googleStatus maps an HTTP status to the google.rpc.Code name Gemini puts
// in error.status.
func googleStatus(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusConflict:
		return "ABORTED"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusNotImplemented:
		return "UNIMPLEMENTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}

type googleError struct {
	Error googleErrorBody `json:"error"`
}

type googleErrorBody struct {
	Code    int               `json:"code"`
	Message string            `json:"message"`
	Status  string            `json:"status"`
	Details []googleErrorInfo `json:"details,omitempty"`
}

// googleErrorInfo is a google.rpc.ErrorInfo detail; it carries the
// machine-readable code, which Gemini's error shape has no field for.
type googleErrorInfo struct {
	Type   string `json:"@type"`
	Reason string `json:"reason"`
	Domain string `json:"domain"`
}

func geminiBlocked(status int, code, message string) []byte {
	e := googleErrorBody{Code: status, Message: message, Status: googleStatus(status)}
	if code != "" {
		e.Details = []googleErrorInfo{{"type.googleapis.com/google.rpc.ErrorInfo", strings.ToUpper(code), "promptwall"}}
	}
	return marshal(googleError{e})
}

type ollamaError struct {
	Error string `json:"error"`
}

func ollamaBlocked(message string) []byte { return marshal(ollamaError{message}) }
