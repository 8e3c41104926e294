package admin

import "github.com/promptwall/promptwall/store"

// mayRead is the visibility rule of a prompt, applied wherever one is
// returned (GET /prompts/{id}, chats, templates): a prompt of another org
// does not exist for the caller; within the org admins and owners read any
// prompt, a member only the prompts they sent.
func (p Principal) mayRead(pr *store.Prompt) bool {
	return pr.OrgID == p.OrgID && (p.CanSeeOrg() || pr.UserID == p.UserID)
}
