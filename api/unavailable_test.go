package api

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/promptwall/promptwall/store"
)

// failingStore fails the calls of a token check and a record list with err.
type failingStore struct {
	store.Backend
	err error
}

func (f failingStore) LookupToken([32]byte) (*store.Token, error)  { return nil, f.err }
func (f failingStore) ListPrompts(store.Query) (store.Page, error) { return store.Page{}, f.err }

var errServerGone = errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")

// A store whose server is unreachable makes the API answer 503
// unavailable with Retry-After, in the error shape, whether the failure
// comes during the token check or the request itself; any other store
// failure stays a 500.
func TestStoreUnavailable(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name       string
		err        error
		token      string
		wantStatus int
		wantCode   string
	}{
		{name: "server unreachable, token check", err: errServerGone, token: tokAlice, wantStatus: http.StatusServiceUnavailable, wantCode: CodeUnavailable},
		{name: "server unreachable, record list", err: errServerGone, token: tokBoot, wantStatus: http.StatusServiceUnavailable, wantCode: CodeUnavailable},
		{name: "other failure, token check", err: errors.New("corrupt row"), token: tokAlice, wantStatus: http.StatusInternalServerError, wantCode: CodeInternal},
		{name: "other failure, record list", err: errors.New("corrupt row"), token: tokBoot, wantStatus: http.StatusInternalServerError, wantCode: CodeInternal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			boot := sha256.Sum256([]byte(tokBoot))
			h, err := New(Config{
				Store:              failingStore{Backend: f.s, err: tc.err},
				BootstrapTokenHash: &boot, BootstrapOrgID: "o1",
				StoreUnavailable: func(err error) bool { return errors.Is(err, errServerGone) },
			})
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(http.MethodGet, "/backend/v1/scans", nil)
			r.Header.Set("Authorization", "Bearer "+tc.token)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			var body errorBody
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", w.Body.String(), err)
			}
			if w.Code != tc.wantStatus || body.Error.Code != tc.wantCode {
				t.Fatalf("got %d %q, want %d %q", w.Code, body.Error.Code, tc.wantStatus, tc.wantCode)
			}
			if retry := w.Header().Get("Retry-After"); (tc.wantStatus == http.StatusServiceUnavailable) != (retry != "") {
				t.Fatalf("Retry-After %q with status %d", retry, w.Code)
			}
		})
	}
}
