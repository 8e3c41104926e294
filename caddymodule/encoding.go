package caddymodule

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// How compressed answers are screened: the handler removes the client's
// Accept-Encoding from the forwarded request of an output-screened route, so
// the upstream can only use a coding the gateway decodes. reverse_proxy's
// transport then asks for gzip itself and decodes it transparently; an
// upstream that compresses anyway (gzip, zstd) is decoded here, within the
// answer size cap, screened, and sent to the client uncompressed (Caddy's
// encode directive may compress it again for the client). Any other coding
// cannot be screened and is refused: compressed bytes never pass unscreened.

// errUnsupportedEncoding reports a content coding the gateway cannot decode.
var errUnsupportedEncoding = errors.New("unsupported content encoding")

// decodeBody returns the decoded body for a Content-Encoding header value,
// reading at most limit decoded bytes.
func decodeBody(encoding string, body []byte, limit int) ([]byte, error) {
	r, err := decodingReader(encoding, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if c, ok := r.(io.Closer); ok {
		defer c.Close()
	}
	out, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("decoding %s answer: %w", encoding, err)
	}
	if len(out) > limit {
		return nil, errResponseTooLarge
	}
	return out, nil
}

// decodingReader wraps r to decode the given Content-Encoding ("" and
// identity pass through).
func decodingReader(encoding string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "identity":
		return r, nil
	case "gzip", "x-gzip":
		return gzip.NewReader(r)
	case "zstd":
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	}
	return nil, fmt.Errorf("%w %q", errUnsupportedEncoding, encoding)
}
