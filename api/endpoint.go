package api

import (
	"errors"
	"net/http"

	"github.com/promptwall/promptwall/policy"
	"github.com/promptwall/promptwall/store"
)

// ErrEndpointNotFound is returned by an EndpointResolver for a group or
// chatbot that has no endpoint; the API answers 404.
var ErrEndpointNotFound = errors.New("api: no endpoint for that group or chatbot")

// EndpointResolver resolves the endpoint configuration served by GET
// /backend/v1/endpoint. The Caddy app implements it over its configured
// endpoints: the global settings, overridden by the project's (group's)
// default endpoint, overridden by the chatbot's endpoint, unless a broader
// layer forced a setting. Both ids empty asks for the global settings. It must be safe for
// concurrent use.
type EndpointResolver interface {
	Resolve(groupID, chatbotID string) (EndpointView, error)
}

// EndpointView is the spec's Endpoint.
type EndpointView struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ChatbotID string          `json:"chatbotId"`
	GroupID   string          `json:"groupId"`
	CreatedAt store.Timestamp `json:"createdAt"`
	Config    EndpointConfig  `json:"config"`
}

// EndpointConfig is the spec's EndpointConfig.
type EndpointConfig struct {
	Packages []ScannerSetting `json:"packages"`
	Scanners []ScannerSetting `json:"scanners"`
	// ProviderRouting names how a provider is chosen among Providers.
	ProviderRouting string             `json:"providerRouting"`
	Providers       []EndpointProvider `json:"providers"`
}

// ScannerSetting is the spec's ScannerSetting: a scanner's setting in the
// wire form the policy compiler writes.
type ScannerSetting = policy.SettingStrings

// EndpointProvider is the spec's EndpointProvider; Default is
// "true"/"false".
type EndpointProvider struct {
	Default string `json:"default"`
	Enabled bool   `json:"enabled"`
	ID      string `json:"id"`
	Name    string `json:"name"`
	Type    string `json:"type"`
}

// EndpointResponse is the response of GET /backend/v1/endpoint.
type EndpointResponse struct {
	Endpoint EndpointView `json:"endpoint"`
}

// getEndpoint serves GET /backend/v1/endpoint (deprecated: its answers, errors included, carry the Deprecation and Link
// headers, set by the checks of documented operations in openapi.go).
// Endpoint configuration is operator config, not tenant data, so every
// role of every org reads it.
func (h *Handler) getEndpoint(w http.ResponseWriter, r *http.Request, _ Principal) *apiError {
	ps, aerr := parseParams(r.URL.RawQuery, []string{"groupId", "chatbotId"}, nil)
	if aerr != nil {
		return aerr
	}
	group, _ := ps.str("groupId")
	chatbot, _ := ps.str("chatbotId")
	ep, err := h.endpoints.Resolve(group, chatbot)
	if errors.Is(err, ErrEndpointNotFound) {
		return &apiError{status: http.StatusNotFound, code: CodeNotFound, message: "no endpoint for that group or chatbot"}
	}
	if err != nil {
		return internal(err)
	}
	// The spec's arrays are never null.
	for _, s := range []*[]ScannerSetting{&ep.Config.Packages, &ep.Config.Scanners} {
		if *s == nil {
			*s = []ScannerSetting{}
		}
	}
	if ep.Config.Providers == nil {
		ep.Config.Providers = []EndpointProvider{}
	}
	writeJSON(w, http.StatusOK, EndpointResponse{Endpoint: ep})
	return nil
}
