package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/promptwall/promptwall/store"
)

// PutCampaign creates or replaces a campaign, as store.Store.PutCampaign.
func (s *Store) PutCampaign(c *store.Campaign) error {
	if err := store.PrepareCampaign(c); err != nil {
		return err
	}
	return putByID(s, "promptwall_campaigns", "campaign", c.ID, c.OrgID, c)
}

// GetCampaign returns the campaign with that id, or store.ErrNotFound.
func (s *Store) GetCampaign(id string) (*store.Campaign, error) {
	return getByID[store.Campaign](s, "promptwall_campaigns", "campaign", id)
}

// listByOrg reads the json bodies of a table's rows of one org (every
// org's when orgID is ""), ordered by id.
func listByOrg[T any](s *Store, table, what, orgID string) ([]*T, error) {
	var out []*T
	err := s.read("list "+what, func(ctx context.Context, q querier) error {
		rows, err := q.Query(ctx, `SELECT body FROM `+table+` WHERE $1 = '' OR org_id = $1 ORDER BY id`, orgID)
		if err != nil {
			return err
		}
		out, err = collect[T](rows, what)
		return err
	})
	return out, err
}

// ListCampaigns returns the org's campaigns ordered by name; every org's
// when orgID is "".
func (s *Store) ListCampaigns(orgID string) ([]*store.Campaign, error) {
	out, err := listByOrg[store.Campaign](s, "promptwall_campaigns", "campaign", orgID)
	store.SortCampaigns(out)
	return out, err
}

// DeleteCampaign removes a campaign definition; its runs are kept.
// store.ErrNotFound if it does not exist.
func (s *Store) DeleteCampaign(id string) error {
	return s.read("delete campaign", func(ctx context.Context, q querier) error {
		tag, err := q.Exec(ctx, `DELETE FROM promptwall_campaigns WHERE id = $1`, id)
		if err == nil && tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: campaign %q", store.ErrNotFound, id)
		}
		return err
	})
}

// PutCampaignSchedule creates or replaces a schedule.
func (s *Store) PutCampaignSchedule(sc *store.CampaignSchedule) error {
	if err := store.PrepareCampaignSchedule(sc); err != nil {
		return err
	}
	return putByID(s, "promptwall_campaign_schedules", "campaign schedule", sc.ID, sc.OrgID, sc)
}

// GetCampaignSchedule returns the schedule with that id, or
// store.ErrNotFound.
func (s *Store) GetCampaignSchedule(id string) (*store.CampaignSchedule, error) {
	return getByID[store.CampaignSchedule](s, "promptwall_campaign_schedules", "campaign schedule", id)
}

// ListCampaignSchedules returns the org's schedules (every org's when
// orgID is ""), ordered by id.
func (s *Store) ListCampaignSchedules(orgID string) ([]*store.CampaignSchedule, error) {
	return listByOrg[store.CampaignSchedule](s, "promptwall_campaign_schedules", "campaign schedule", orgID)
}

func putRunHeader(ctx context.Context, tx pgx.Tx, r *store.CampaignRun, insert bool) error {
	body, err := json.Marshal(store.RunHeader(r))
	if err != nil {
		return err
	}
	if !insert {
		_, err = tx.Exec(ctx, `UPDATE promptwall_campaign_runs SET status = $2, body = $3 WHERE id = $1`, r.ID, r.Status, body)
		return err
	}
	tag, err := tx.Exec(ctx, `INSERT INTO promptwall_campaign_runs (id, org_id, status, body) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO NOTHING`, r.ID, r.OrgID, r.Status, body)
	if err == nil && tag.RowsAffected() == 0 {
		return store.CampaignRunExists(r.ID)
	}
	return err
}

func putAttackRuns(ctx context.Context, tx pgx.Tx, r *store.CampaignRun, ars []*store.AttackRun) error {
	if len(ars) == 0 {
		return nil
	}
	ids, heads, results := make([]string, len(ars)), make([][]byte, len(ars)), make([][]byte, len(ars))
	for i, ar := range ars {
		head := *ar
		head.Results = nil
		res := ar.Results
		if res == nil {
			res = []store.AttackResult{}
		}
		var err error
		if heads[i], err = json.Marshal(head); err != nil {
			return err
		}
		if results[i], err = json.Marshal(res); err != nil {
			return err
		}
		ids[i] = ar.ID
	}
	_, err := tx.Exec(ctx, `INSERT INTO promptwall_attack_runs (run_id, id, head, results)
		SELECT $1, * FROM unnest($2::text[], $3::json[], $4::json[])
		ON CONFLICT (run_id, id) DO UPDATE SET head = EXCLUDED.head, results = EXCLUDED.results`, r.ID, ids, heads, results)
	return err
}

// CreateCampaignRun stores a new run with its attack runs, in one
// transaction, as store.Store.CreateCampaignRun.
func (s *Store) CreateCampaignRun(r *store.CampaignRun) error {
	if err := store.CheckCampaignRun(r, true); err != nil {
		return err
	}
	if err := store.CheckAttackRuns(r, r.AttackRuns); err != nil {
		return err
	}
	return s.inTx("create campaign run", func(ctx context.Context, tx pgx.Tx) error {
		if err := putRunHeader(ctx, tx, r, true); err != nil {
			return err
		}
		return putAttackRuns(ctx, tx, r, r.AttackRuns)
	})
}

// SaveCampaignRun updates an existing run's header and the given attack
// runs in one transaction, as store.Store.SaveCampaignRun.
func (s *Store) SaveCampaignRun(r *store.CampaignRun, ars ...*store.AttackRun) error {
	if err := store.CheckCampaignRun(r, false); err != nil {
		return err
	}
	return s.inTx("save campaign run", func(ctx context.Context, tx pgx.Tx) error {
		var org string
		err := tx.QueryRow(ctx, `SELECT org_id FROM promptwall_campaign_runs WHERE id = $1 FOR UPDATE`, r.ID).Scan(&org)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: campaign run %q", store.ErrNotFound, r.ID)
		}
		if err != nil {
			return err
		}
		if org != r.OrgID {
			return store.CampaignRunOfOtherOrg(r.ID, org)
		}
		if err := store.CheckAttackRuns(r, ars); err != nil {
			return err
		}
		if err := putRunHeader(ctx, tx, r, false); err != nil {
			return err
		}
		return putAttackRuns(ctx, tx, r, ars)
	})
}

// GetCampaignRun returns a run with its attack runs in plan order, or
// store.ErrNotFound, as store.Store.GetCampaignRun.
func (s *Store) GetCampaignRun(id string, withResults bool) (*store.CampaignRun, error) {
	r := new(store.CampaignRun)
	err := s.read("get campaign run", func(ctx context.Context, q querier) error {
		if err := getJSON(q.QueryRow(ctx, `SELECT body FROM promptwall_campaign_runs WHERE id = $1`, id), r, "campaign run", id); err != nil {
			return err
		}
		return loadAttackRuns(ctx, q, []*store.CampaignRun{r}, withResults)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// loadAttackRuns sets the AttackRuns of runs, in plan order.
func loadAttackRuns(ctx context.Context, q querier, runs []*store.CampaignRun, withResults bool) error {
	byID := make(map[string]*store.CampaignRun, len(runs))
	ids := make([]string, len(runs))
	for i, r := range runs {
		r.AttackRuns = r.AttackRuns[:0]
		byID[r.ID], ids[i] = r, r.ID
	}
	results := "NULL::json"
	if withResults {
		results = "results"
	}
	rows, err := q.Query(ctx, `SELECT run_id, head, `+results+` FROM promptwall_attack_runs
		WHERE run_id = ANY($1) ORDER BY run_id, id`, ids)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			runID     string
			head, res []byte
		)
		if err := rows.Scan(&runID, &head, &res); err != nil {
			return err
		}
		ar := new(store.AttackRun)
		if err := json.Unmarshal(head, ar); err != nil {
			return fmt.Errorf("store: decode attack run %q: %w", runID+"/"+ar.ID, err)
		}
		ar.Results = nil
		if res != nil {
			if err := json.Unmarshal(res, &ar.Results); err != nil {
				return fmt.Errorf("store: decode attack run %q: %w", runID+"/"+ar.ID, err)
			}
		}
		r := byID[runID]
		r.AttackRuns = append(r.AttackRuns, ar)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range runs {
		store.SortAttackRuns(r.AttackRuns)
	}
	return nil
}

// CampaignRunsWithStatus returns the headers (no attack runs) of every
// org's runs in one of the statuses, ordered by id.
func (s *Store) CampaignRunsWithStatus(statuses ...string) ([]*store.CampaignRun, error) {
	var out []*store.CampaignRun
	err := s.read("campaign runs by status", func(ctx context.Context, q querier) error {
		rows, err := q.Query(ctx, `SELECT body FROM promptwall_campaign_runs WHERE status = ANY($1) ORDER BY id`, statuses)
		if err != nil {
			return err
		}
		out, err = collect[store.CampaignRun](rows, "campaign run")
		return err
	})
	return out, err
}

// ListCampaignRuns returns one page of the org's runs, as
// store.Store.ListCampaignRuns, reading the org's run headers in one
// repeatable-read snapshot with the attack runs of the page.
func (s *Store) ListCampaignRuns(q store.CampaignRunQuery) (store.CampaignRunPage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	var page store.CampaignRunPage
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		page, err = s.cursors.ListCampaignRuns(q,
			func(orgID string) ([]*store.CampaignRun, error) {
				rows, err := tx.Query(ctx, `SELECT body FROM promptwall_campaign_runs WHERE org_id = $1`, orgID)
				if err != nil {
					return nil, err
				}
				return collect[store.CampaignRun](rows, "campaign run")
			},
			func(runs []*store.CampaignRun, withResults bool) error {
				return loadAttackRuns(ctx, tx, runs, withResults)
			})
		return err
	})
	return page, wrapDB("list campaign runs", err)
}
