// Package reqhead bounds the size of a request's head (its request line and
// header fields) where the gateway and the API can still answer in their
// JSON error shapes.
//
// Go's HTTP server refuses a head larger than the server's max_header_size
// by itself, with a plain-text 431, before any handler runs. A server
// configured with a larger max_header_size than MaxBytes lets heads between
// the two reach the handlers, which refuse them with a JSON 431 instead.
package reqhead

import (
	"fmt"
	"net/http"
)

// MaxBytes is the largest request head the handlers accept.
const MaxBytes = 64 << 10

// Code is the error code of the refusal.
const Code = "request_header_too_large"

// Bytes returns the size of r's head as an HTTP/1.1 client sends it: the
// request line, the Host field and every other field, each line with its
// CRLF. HTTP/2 heads are counted the same way, before compression.
func Bytes(r *http.Request) int {
	// "METHOD SP target SP HTTP/1.1 CRLF"
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
	if r.RequestURI == "" {
		n += len(r.URL.RequestURI())
	}
	n += len("Host: ") + len(r.Host) + 2
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + 2 + len(v) + 2
		}
	}
	return n + 2 // the empty line that ends the head
}

// Check returns the refusal message for a head over MaxBytes, "" for one
// within it.
func Check(r *http.Request) string {
	n := Bytes(r)
	if n <= MaxBytes {
		return ""
	}
	return fmt.Sprintf("The request line and headers are %d bytes; the limit is %d. Send long inputs in the body.", n, MaxBytes)
}
