import { sql, type Kysely } from 'kysely';

// One lifecycle for every operator credential (docs/adr/0018).
//
// - operators.credential_generation: every console session carries the generation it was opened
//   under, and is live only while it still matches. A password reset, disable, enable, role
//   change, second-factor reset or "sign out everywhere" moves it on: every session ends at once,
//   on every instance, with no list of places to remember, and enable revives none.
// - console_sessions.owes_password_change: the forced change belongs to the session opened with
//   the one-time password, not to every password session of the operator.
// - console_sessions.key_fingerprint: a session opened with the admin key lives only while that
//   key is the server's key.
// - operator_tokens.lineage: the personal tokens a token was made from, nearest last. A token is
//   live only while every one of them is: a derived token never outlives the token it came from.
// - operators.second_factor_*: wrong second-factor codes per account, counted before each code is
//   judged, in a 15-minute window, so parallel guesses on many sessions share one budget.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table operators add column credential_generation integer not null default 1;
    alter table operators add column second_factor_failures integer not null default 0;
    alter table operators add column second_factor_window_start timestamptz;
    alter table operators add column second_factor_locked_until timestamptz;
    alter table console_sessions add column operator_generation integer;
    alter table console_sessions add column owes_password_change boolean not null default false;
    alter table console_sessions add column key_fingerprint text;
    alter table operator_tokens add column lineage text[] not null default '{}';
    create index console_sessions_operator_idx on console_sessions (operator_id) where operator_id is not null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index console_sessions_operator_idx;
    alter table operator_tokens drop column lineage;
    alter table console_sessions drop column key_fingerprint;
    alter table console_sessions drop column owes_password_change;
    alter table console_sessions drop column operator_generation;
    alter table operators drop column second_factor_locked_until;
    alter table operators drop column second_factor_window_start;
    alter table operators drop column second_factor_failures;
    alter table operators drop column credential_generation;
  `.execute(db);
}
