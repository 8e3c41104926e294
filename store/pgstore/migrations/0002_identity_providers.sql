-- Orgs, users, API tokens and provider configuration versions. body holds
-- the JSON the bbolt store keeps (json, not jsonb: the text is kept as
-- written, so a provider's public JSON compares byte for byte); the
-- columns beside it are what lookups, lists and unique constraints need.
-- Keys collate as "C" so that lists order byte-wise, as in the bbolt store.
CREATE TABLE promptwall_orgs (
	id       text COLLATE "C" PRIMARY KEY,
	-- The trimmed, lower-cased name; NULL for an org without a name.
	name_key text COLLATE "C" UNIQUE,
	body     json NOT NULL
);

CREATE TABLE promptwall_users (
	id        text COLLATE "C" PRIMARY KEY,
	org_id    text COLLATE "C" NOT NULL,
	-- The trimmed, lower-cased e-mail; NULL for a user without one.
	email_key text COLLATE "C",
	role      text NOT NULL,
	blocked   boolean NOT NULL,
	body      json NOT NULL,
	CONSTRAINT promptwall_users_email UNIQUE (org_id, email_key)
);
CREATE INDEX promptwall_users_org ON promptwall_users (org_id, id);

-- Tokens by SHA-256 only: the clear token is never stored. last_used_ms is
-- kept out of body so that touching a token is one conditional UPDATE.
CREATE TABLE promptwall_tokens (
	hash         bytea PRIMARY KEY,
	id           text COLLATE "C" NOT NULL UNIQUE,
	user_id      text COLLATE "C" NOT NULL,
	last_used_ms bigint,
	body         json NOT NULL
);
CREATE INDEX promptwall_tokens_user ON promptwall_tokens (user_id, id);

-- A provider's creation sequence orders an org's providers and is what
-- provider list cursors hold.
CREATE TABLE promptwall_provider_seqs (
	org_id text COLLATE "C" NOT NULL,
	id     text COLLATE "C" NOT NULL,
	seq    bigserial NOT NULL UNIQUE,
	PRIMARY KEY (org_id, id)
);

CREATE TABLE promptwall_provider_versions (
	seq          bigint  NOT NULL REFERENCES promptwall_provider_seqs (seq),
	version      integer NOT NULL,
	org_id       text COLLATE "C" NOT NULL,
	effective_ms bigint  NOT NULL,
	body         json    NOT NULL,
	PRIMARY KEY (seq, version)
);
CREATE INDEX promptwall_provider_versions_org ON promptwall_provider_versions (org_id, seq, version);
