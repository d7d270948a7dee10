/*
 * A client context's view of the lock homes its service's rdlmd daemons host
 * (home_client.c), and exclusive locks on them (slock.c). home_layout.h has the region and the
 * lock word; home_server.h the daemon's side.
 *
 * Homes
 *   One per replica of RDLM_AUTHORITY, ordered by address string (so every client
 *   agrees whatever order it lists them in); a lock's home is its lock id
 *   (rdlm_svc_lock_id: the name id, within the session's namespace under --auth
 *   munge) modulo their number. A home is reached lazily: its description (HOMES, answered by that
 *   replica's client port), a UCX context over the relay bootstrap, the region's key,
 *   and a tag drawn from the home (fetch-add) under which this process's session id
 *   is published in the region. An operation that finds the home dead (the transport
 *   says RDLM_ERR_PEER_DEAD) marks it down; the next use reconnects (at most every
 *   200 ms), finding a new epoch if the daemon restarted; a reconnect to the same
 *   life of the home (same epoch) keeps its tag, so words held under it stay this
 *   process's. An acquire waits for an unreachable home until its deadline.
 *
 * Slots (slot.c): a lock lives in one slot of its bucket at the home, resolved on
 *   first use in each life of the home and again whenever the slot moved to another
 *   name (a name without a slot takes over the oldest free one).
 *
 * Locks (the word: sequence << 24 | WANT << 23 | tag; token = epoch << 40 | sequence)
 *   acquire  compare-and-swap of FREE(seq) to HELD(seq + 1, my tag): one remote atomic
 *            when the word is free and its value guessed right (the last one seen
 *            here), three when not (the word read, the slot's key checked: home_layout.h).
 *            Held by another: poll the word (20 us .. 1 ms pauses; the wait ends when
 *            the owner's context closes: rdlm_svc_open's closing); once it has not
 *            changed for 500 ms (and every 500 ms while it does not), if the
 *            holder's tag names a session the authority has ended
 *            (FATE, core/lease), break the lock with a compare-and-swap that only
 *            succeeds if the word is still the one read: RDLM_OWNER_DEAD, with the
 *            next token.
 *   bypass   a waiter that has waited RDLM_LOCK_BYPASS_US sets WANT on the word
 *            (one remote fetch-or, whatever the word is by then), and polls from
 *            20 us again.
 *   release  compare-and-swap of HELD(seq, my tag) back to FREE(seq): one remote
 *            atomic; two when a waiter set WANT: then the word goes to FREE(seq) with
 *            WANT, which any other client may take. For 2 ms after a release (more
 *            than a waiter's longest pause) this process takes no word with WANT
 *            unless it set WANT itself. So a process that re-acquires in a loop lets
 *            a waiter in once per bound, as the node-local lock does. If the word
 *            changed otherwise, the lock was broken (this session ended):
 *            RDLM_ERR_LEASE_EXPIRED; if the home restarted meanwhile, the lock was
 *            lost with it: RDLM_ERR_PEER_DEAD.
 *   No authority round trip on either path; one per 500 ms of waiting behind a word
 *   that does not change.
 *   Homes use network transports only: UCX refuses shared memory for endpoints that
 *   must report a dead peer, and a dead home must be noticed (its memory would
 *   otherwise stay mapped and usable).
 *
 * Thread safety: every function may be called from any thread; one process must not
 * acquire one lock twice at once (the caller's node-local lock ensures it).
 */
#ifndef RDLM_SVC_SVC_H
#define RDLM_SVC_SVC_H

#include <stdint.h>

#include <rdlm/lease.h>
#include <rdlm/status.h>

#include "atomics.h"
#include "config.h"

typedef struct rdlm_svc rdlm_svc_t;

/**
 * The homes of the service at authority ("a:p[,b:p...]", any spelling or subset of
 * the replicas), for session (the context's lease, which stays the caller's). Asks
 * every listed replica for its home, in rounds until one describes it (within 10 s):
 * the homes are then the authority's members it names (every replica, by id, at its
 * --peers client address), so every client places a lock at the same home. Then
 * asks every member whether it hosts a home: all of them or none must (an rdlmd run
 * with --home-slots 0 says it has none). RDLM_ERR_UNSUPPORTED if every member said
 * it hosts none, or a listed replica serves no homes at all (an authority embedded in
 * a job): the caller goes on without; RDLM_ERR_BAD_CONFIG if two name other members,
 * or one hosts a home and another none; RDLM_ERR_UNAVAILABLE if no home answered
 * and a member did not answer either (it may host one) within the 10 s. Homes that do not
 * answer are tried again on use. cfg gives the transport's settings (RDLM_PEER_TIMEOUT_MS,
 * RDLM_STATS). closing (NULL: none) is the caller's flag, nonzero once its context is being
 * destroyed: the waits of rdlm_svc_lock_acquire then end (RDLM_ERR_CLOSED); it must outlive
 * the service. Blocking.
 */
rdlm_status_t rdlm_svc_open(const char *authority, rdlm_session_h session,
                            const rdlm_config_t *cfg, const rdlm_atomic_u32_t *closing,
                            rdlm_svc_t **svc_p);

/** Close every home's transport and free. NULL is a no-op. */
void rdlm_svc_close(rdlm_svc_t *svc);

/** Remote operations the lock path sent to the homes (slot look-ups, compare-and-swaps,
 *  reads of a word or a holder's session; not the set-up of a link). Thread-safe. */
uint64_t rdlm_svc_home_ops(rdlm_svc_t *svc);

/** The id of a lock named name_id (rdlm_table_id) on the homes: name_id itself when
 *  the authority does not namespace names (--auth none), else mixed with the
 *  session's namespace (rdlm_hash_in), so the same name in two jobs is two locks, as
 *  at the authority; bit 16 set if bits 63..16 were all 0 (a slot key keeps those).
 *  Pure. */
uint64_t rdlm_svc_lock_id(const rdlm_svc_t *svc, uint64_t name_id);

/** The home (0 .. homes-1) of lock id. */
uint32_t rdlm_svc_home_of(const rdlm_svc_t *svc, uint64_t id);

/**
 * Acquire the lock of name id (not held by this process). deadline_ns: CLOCK_MONOTONIC
 * (UINT64_MAX: none); try_only: one attempt. RDLM_OK or RDLM_OWNER_DEAD with *token_p;
 * RDLM_ERR_BUSY (try), RDLM_ERR_TIMEOUT, RDLM_ERR_LEASE_EXPIRED (this process's
 * lease was lost while it waited), RDLM_ERR_PEER_DEAD / RDLM_ERR_UNAVAILABLE (the
 * home was down or unreachable until the deadline), RDLM_ERR_NO_RESOURCE (the
 * home's tags, or the slots of the lock's bucket, are all in use: logged),
 * RDLM_ERR_MISMATCH (the home speaks another layout version: logged),
 * RDLM_ERR_BAD_CONFIG (the lock's replica says it hosts no home, others do: logged),
 * RDLM_ERR_NO_MEMORY, RDLM_ERR_CLOSED (the closing flag given to rdlm_svc_open was
 * set: seen after each pause of a wait, within 1 ms polling a word or a slot and
 * within 50 ms waiting for a home that is down; a remote operation or a connect under
 * way ends first). A word taken while the flag is set is kept: the caller gives it back.
 */
rdlm_status_t rdlm_svc_lock_acquire(rdlm_svc_t *svc, uint64_t id, uint64_t deadline_ns,
                                    int try_only, uint64_t *token_p);

/** Release the lock of id that this process holds. RDLM_OK; RDLM_ERR_NOT_OWNER (not
 *  held); RDLM_ERR_LEASE_EXPIRED (broken by a waiter: this session ended);
 *  RDLM_ERR_PEER_DEAD (its home restarted, or stayed unreachable for 15 s: the lock
 *  went with it). Through a link declared dead it reconnects to the same life of the
 *  home and frees the word there. */
rdlm_status_t rdlm_svc_lock_release(rdlm_svc_t *svc, uint64_t id);

/** Give up the lock of id that this process holds WITHOUT freeing its word, after this
 *  session's lease was lost (an acquire granted RDLM_OWNER_DEAD, undone): the word
 *  stays held under this session's tag until the authority ends the session, and the
 *  next holder breaks it and gets RDLM_OWNER_DEAD, as after a holder that died (a
 *  freed word would tell it RDLM_OK). Logged. RDLM_OK; RDLM_ERR_NOT_OWNER (not held).
 *  Non-blocking (a mutex). */
rdlm_status_t rdlm_svc_lock_abandon(rdlm_svc_t *svc, uint64_t id);

/** The last handle of lock id in this process was closed: forget its state here (a
 *  cache of its slot) unless it is held or a call uses it, so that the process's
 *  table holds the locks in use, not every lock ever used. Non-blocking (a mutex). */
void rdlm_svc_lock_forget(rdlm_svc_t *svc, uint64_t id);

#endif
