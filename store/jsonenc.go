package store

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"

	"github.com/promptwall/promptwall/internal/jsonstr"
)

// The stored JSON of a Prompt is written by hand: encoding/json walks the
// struct by reflection on every request, which made it the largest share of
// the gateway's own CPU per request. The output is byte for byte what
// json.Marshal gives for the normalized record (TestAppendPromptJSON holds
// the two together, field by field), so records read back with
// json.Unmarshal exactly as before and stored records of either encoder are
// indistinguishable.

// appendPromptJSON appends the JSON of p as json.Marshal writes it after
// p.Result.Normalize(): nil scanner results and nil matches are written as
// []. It fails only on a score that JSON cannot hold (NaN, ±Inf), with the
// error json.Marshal gives.
func appendPromptJSON(b []byte, p *Prompt) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, p.ID)
	b = append(b, `,"externalMetadata":`...)
	b = appendJSONString(b, p.ExternalMetadata)
	b = append(b, `,"fromTemplate":`...)
	b = strconv.AppendBool(b, p.FromTemplate)
	b = append(b, `,"input":`...)
	b = appendJSONString(b, p.Input)
	b = append(b, `,"memory":`...)
	b = appendJSONString(b, p.Memory)
	b = append(b, `,"orgId":`...)
	b = appendJSONString(b, p.OrgID)
	b = append(b, `,"parentId":`...)
	b = appendJSONString(b, p.ParentID)
	b = append(b, `,"preserve":`...)
	b = strconv.AppendBool(b, p.Preserve)
	b = append(b, `,"projectId":`...)
	b = appendJSONString(b, p.ProjectID)
	b = append(b, `,"provider":`...)
	b = appendJSONString(b, p.Provider)
	b = append(b, `,"receivedAt":`...)
	b = p.ReceivedAt.appendJSON(b)
	b = append(b, `,"result":`...)
	b, err := appendResultJSON(b, &p.Result)
	if err != nil {
		return b, err
	}
	b = append(b, `,"type":`...)
	b = appendJSONString(b, p.Type)
	b = append(b, `,"userId":`...)
	b = appendJSONString(b, p.UserID)
	b = appendOmitEmpty(b, `,"endpointId":`, p.EndpointID)
	b = appendOmitEmpty(b, `,"providerId":`, p.ProviderID)
	b = appendOmitEmpty(b, `,"chatId":`, p.ChatID)
	b = appendOmitEmpty(b, `,"promptTemplateId":`, p.PromptTemplateID)
	b = appendOmitEmpty(b, `,"scanners":`, p.Scanners)
	b = appendOmitEmpty(b, `,"scannersRef":`, p.ScannersRef)
	return append(b, '}'), nil
}

func appendResultJSON(b []byte, r *PromptResult) ([]byte, error) {
	b = append(b, `{"analysis":`...)
	b = appendJSONString(b, r.Analysis)
	b = append(b, `,"files":`...)
	b = appendJSONString(b, r.Files)
	b = append(b, `,"outcome":`...)
	b = appendJSONString(b, r.Outcome)
	b = append(b, `,"providerResult":`...)
	b = appendJSONString(b, r.ProviderResult)
	b = append(b, `,"response":`...)
	b = appendJSONString(b, r.Response)
	b = append(b, `,"scannerResults":[`...)
	for i := range r.ScannerResults {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendScannerResultJSON(b, &r.ScannerResults[i]); err != nil {
			return b, err
		}
	}
	return append(b, "]}"...), nil
}

func appendScannerResultJSON(b []byte, sr *ScannerResult) ([]byte, error) {
	b = append(b, `{"completedDate":`...)
	b = sr.CompletedDate.appendJSON(b)
	b = append(b, `,"customConfig":`...)
	b = strconv.AppendBool(b, sr.CustomConfig)
	b = append(b, `,"data":{"type":`...)
	d := &sr.Data
	b = appendJSONString(b, d.Type)
	b = append(b, `,"matches":[`...)
	for i, m := range d.Matches {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(m[0]), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(m[1]), 10)
		b = append(b, ']')
	}
	b = append(b, ']')
	if len(d.Findings) > 0 {
		b = append(b, `,"findings":[`...)
		for i := range d.Findings {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendFindingJSON(b, &d.Findings[i]); err != nil {
				return b, err
			}
		}
		b = append(b, ']')
	}
	b = appendOmitEmpty(b, `,"reason":`, d.Reason)
	b = appendOmitEmpty(b, `,"error":`, d.Error)
	b = append(b, `},"outcome":`...)
	b = appendJSONString(b, sr.Outcome)
	b = append(b, `,"scanDirection":`...)
	b = appendJSONString(b, sr.ScanDirection)
	b = append(b, `,"scannerId":`...)
	b = appendJSONString(b, sr.ScannerID)
	b = append(b, `,"scannerVersionMeta":`...)
	b = appendJSONString(b, sr.ScannerVersionMeta)
	b = append(b, `,"startedDate":`...)
	b = sr.StartedDate.appendJSON(b)
	return append(b, '}'), nil
}

func appendFindingJSON(b []byte, f *Finding) ([]byte, error) {
	b = append(b, `{"message":`...)
	b = strconv.AppendInt(b, int64(f.Message), 10)
	b = append(b, `,"role":`...)
	b = appendJSONString(b, f.Role)
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, f.Kind)
	b = append(b, `,"start":`...)
	b = strconv.AppendInt(b, int64(f.Start), 10)
	b = append(b, `,"end":`...)
	b = strconv.AppendInt(b, int64(f.End), 10)
	b = append(b, `,"score":`...)
	b, err := appendJSONFloat(b, f.Score)
	if err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// appendOmitEmpty appends a string member tagged omitempty: nothing when s
// is empty, else the key (with its leading comma) and the value.
func appendOmitEmpty(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendJSONString(append(b, key...), s)
}

// appendJSONFloat appends f as encoding/json writes a float64: the shortest
// decimal that reads back as f, switching to an exponent outside
// [1e-6, 1e21) with a two-digit-minimum exponent trimmed (1e-07 -> 1e-7).
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, &json.UnsupportedValueError{Value: reflect.ValueOf(f), Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	verb := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		verb = 'e'
	}
	b = strconv.AppendFloat(b, f, verb, -1, 64)
	if verb == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// appendJSONString appends s quoted as encoding/json does by default: HTML
// characters, U+2028 and U+2029 escaped, invalid UTF-8 as \ufffd.
func appendJSONString(b []byte, s string) []byte { return jsonstr.Append(b, s, true) }
