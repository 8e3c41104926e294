package format

// BlockAfter renders the error that ends a stream screening blocked, for a
// client that has (forwarded) or has not yet received any of the stream's
// events. Most streams' events stand alone and this is s.Block. Gemini's
// streamed JSON array (streamGenerateContent without alt=sse) is one JSON
// document across events: the first element carries the opening "[", so
// the block is an array element with the provider's error object, opened
// or continued as the client's copy needs, and the array is closed; the
// client then parses valid JSON whose last element is the error.
func BlockAfter(s Stream, forwarded bool, code, message string) []byte {
	d, ok := s.(*decoder)
	if !ok || d.geminiArray == nil || !d.geminiArray() {
		return s.Block(code, message)
	}
	body := geminiBlocked(403, code, message)
	out := make([]byte, 0, len(body)+4)
	if forwarded {
		out = append(out, ",\n"...)
	} else {
		out = append(out, '[')
	}
	out = append(out, body...)
	return append(out, "]\n"...)
}

// isArray tells whether the sniffer found a JSON array.
func (s *sniffReader) isArray() bool {
	_, ok := s.fr.(*jsonArrayReader)
	return ok
}
