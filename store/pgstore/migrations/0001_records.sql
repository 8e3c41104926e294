-- Records in commit order: seq is assigned under the writers' lock, so
-- new records only ever appear at the newest end of a listing, whichever
-- instance wrote them.
CREATE TABLE promptwall_prompts (
	seq          bigserial PRIMARY KEY,
	id           text      NOT NULL UNIQUE,
	org_id       text      NOT NULL,
	user_id      text      NOT NULL,
	outcome      text      NOT NULL,
	project_id   text      NOT NULL,
	provider_id  text      NOT NULL,
	endpoint_id  text      NOT NULL,
	received_ms  bigint    NOT NULL,
	preserve     boolean   NOT NULL,
	input        text      NOT NULL,
	-- The record as JSON without input and scanner settings.
	body         bytea     NOT NULL,
	scanners_ref text      NOT NULL
);
CREATE INDEX promptwall_prompts_org ON promptwall_prompts (org_id, seq);
CREATE INDEX promptwall_prompts_user ON promptwall_prompts (org_id, user_id, seq);
CREATE INDEX promptwall_prompts_expiry ON promptwall_prompts (received_ms) WHERE NOT preserve;

-- Each distinct scanner settings JSON once, by the hex SHA-256 of it.
CREATE TABLE promptwall_scanner_sets (
	ref      text PRIMARY KEY,
	settings text NOT NULL
);
