-- Chats, prompt templates and red-team campaigns, bodies as JSON as in
-- the bbolt store. Keys collate as "C" so that lists order byte-wise.
CREATE TABLE promptwall_chats (
	id     text COLLATE "C" PRIMARY KEY,
	org_id text COLLATE "C" NOT NULL,
	body   json NOT NULL
);

CREATE TABLE promptwall_prompt_templates (
	id     text COLLATE "C" PRIMARY KEY,
	org_id text COLLATE "C" NOT NULL,
	body   json NOT NULL
);

-- The prompts of a chat or a template, in the order they were added. A
-- prompt may be linked before its record is committed, or after it
-- expired: reads skip what they cannot find.
CREATE TABLE promptwall_prompt_links (
	seq       bigserial PRIMARY KEY,
	kind      "char" NOT NULL, -- 'c' chat, 't' template
	owner_id  text COLLATE "C" NOT NULL,
	prompt_id text NOT NULL
);
CREATE INDEX promptwall_prompt_links_owner ON promptwall_prompt_links (kind, owner_id, seq);

CREATE TABLE promptwall_campaigns (
	id     text COLLATE "C" PRIMARY KEY,
	org_id text COLLATE "C" NOT NULL,
	body   json NOT NULL
);
CREATE INDEX promptwall_campaigns_org ON promptwall_campaigns (org_id);

CREATE TABLE promptwall_campaign_schedules (
	id     text COLLATE "C" PRIMARY KEY,
	org_id text COLLATE "C" NOT NULL,
	body   json NOT NULL
);
CREATE INDEX promptwall_campaign_schedules_org ON promptwall_campaign_schedules (org_id, id);

-- Run headers (without attack runs), rewritten on every progress step;
-- attack runs apart, so that a step does not copy the results.
CREATE TABLE promptwall_campaign_runs (
	id     text COLLATE "C" PRIMARY KEY,
	org_id text COLLATE "C" NOT NULL,
	status text NOT NULL,
	body   json NOT NULL
);
CREATE INDEX promptwall_campaign_runs_org ON promptwall_campaign_runs (org_id);
CREATE INDEX promptwall_campaign_runs_status ON promptwall_campaign_runs (status);

CREATE TABLE promptwall_attack_runs (
	run_id text COLLATE "C" NOT NULL REFERENCES promptwall_campaign_runs (id),
	id     text COLLATE "C" NOT NULL,
	-- The attack run without its results, and its results apart: reads
	-- watching progress skip them.
	head    json NOT NULL,
	results json NOT NULL,
	PRIMARY KEY (run_id, id)
);
