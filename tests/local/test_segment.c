/* Shared segment: create then attach, private mode, stale replacement with a larger
 * epoch, replacement of a corrupt file nobody holds, refusal of an unsafe one, removal
 * at the last detach, dead process slots reclaimed, slot exhaustion; a header field or
 * file size that disagrees with the layout while a process is attached gives
 * RDLM_ERR_CORRUPT and replaces nothing; a scribbled slot high-water mark is clamped;
 * a segment whose attachers hold the liveness flock is never replaced, even when no
 * slot looks alive. Where it lives: in the user's directory /dev/shm/rdlm-<uid> (mode
 * 0700, kept after the last detach); a symlink in place of the segment or its lock
 * file is refused with RDLM_ERR_PERMISSION and its target left alone; a directory
 * given instead (RDLM_SHM_DIR) is created 0700 if missing, and refused with
 * RDLM_ERR_PERMISSION when it is a symlink, a file or open to group or others, with
 * RDLM_ERR_BAD_CONFIG when relative. Other users' squatting: test_segment_users.c. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "segment.h"

static char job[32];

static rdlm_segment_params_t params(const char *tag, uint32_t max_procs)
{
    snprintf(job, sizeof(job), "ut-%d-%s", (int)getpid(), tag);
    return (rdlm_segment_params_t){.job = job, .capacity = 64, .max_procs = max_procs};
}

/* The path of the job's segment (suffix ".seg") or lock file (".lock"). */
static void job_path(char *buf, size_t len, const char *suffix)
{
    snprintf(buf, len, "/dev/shm/rdlm-%u/%s%s", (unsigned)geteuid(), job, suffix);
}

/* Create the job's segment file, which must not exist yet; its descriptor. */
static int seg_file_create(void)
{
    char name[96];
    int fd;

    job_path(name, sizeof(name), ".seg");
    fd = open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    return fd;
}

static int shm_exists(void)
{
    char path[96];
    struct stat st;

    job_path(path, sizeof(path), ".seg");
    return stat(path, &st) == 0;
}

static void first_attach_creates_second_attaches_last_detach_removes(void **state)
{
    rdlm_segment_params_t p = params("life", 4);
    rdlm_segment_t a, b;
    char path[96];
    struct stat st;

    (void)state;
    assert_int_equal(rdlm_segment_attach(&p, &a), RDLM_OK);
    assert_int_equal(rdlm_segment_attach(&p, &b), RDLM_OK);
    assert_true(a.created);
    assert_false(b.created);
    assert_int_not_equal(a.self_owner, b.self_owner);
    assert_int_equal(a.hdr->epoch, b.hdr->epoch);
    job_path(path, sizeof(path), ".seg");
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(rdlm_segment_live_procs(&a), 2);
    rdlm_segment_detach(&b);
    assert_true(shm_exists());
    rdlm_segment_detach(&a);
    assert_false(shm_exists());
}

static void segment_of_dead_job_is_replaced_with_larger_epoch(void **state)
{
    rdlm_segment_params_t p = params("stale", 4);
    rdlm_segment_t seg;
    int pipefd[2], status;
    uint32_t old_epoch = 0;
    pid_t child;

    (void)state;
    assert_int_equal(pipe(pipefd), 0);
    child = fork();
    if (child == 0) {
        if (rdlm_segment_attach(&p, &seg) != RDLM_OK) {
            _exit(1);
        }
        (void)!write(pipefd[1], &seg.hdr->epoch, sizeof(uint32_t));
        _exit(0); /* dies attached: the segment is now stale */
    }
    assert_int_equal(read(pipefd[0], &old_epoch, sizeof(old_epoch)), sizeof(old_epoch));
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(shm_exists());
    assert_int_equal(rdlm_segment_attach(&p, &seg), RDLM_OK);
    assert_true(seg.replaced_stale);
    assert_true(seg.created);
    assert_true(seg.hdr->epoch > old_epoch);
    rdlm_segment_detach(&seg);
    close(pipefd[0]);
    close(pipefd[1]);
}

static void corrupt_segment_is_replaced(void **state)
{
    rdlm_segment_params_t p = params("corrupt", 4);
    rdlm_segment_t seg;
    int fd;

    (void)state;
    fd = seg_file_create();
    assert_int_equal(write(fd, "garbage, not a segment", 22), 22);
    close(fd);
    assert_int_equal(rdlm_segment_attach(&p, &seg), RDLM_OK);
    assert_true(seg.replaced_stale);
    assert_int_equal(seg.hdr->capacity, 64);
    rdlm_segment_detach(&seg);
}

static void group_readable_segment_is_refused_untouched(void **state)
{
    rdlm_segment_params_t p = params("unsafe", 4);
    rdlm_segment_t seg;
    char name[96];
    int fd;

    (void)state;
    fd = seg_file_create();
    assert_int_equal(fchmod(fd, 0644), 0);
    close(fd);
    assert_int_equal(rdlm_segment_attach(&p, &seg), RDLM_ERR_PERMISSION);
    assert_true(shm_exists()); /* not removed: it is not ours to judge */
    job_path(name, sizeof(name), ".seg");
    unlink(name);
    job_path(name, sizeof(name), ".lock");
    unlink(name);
}

static void slots_of_dead_processes_are_reclaimed_and_exhaustion_is_an_error(void **state)
{
    rdlm_segment_params_t p = params("slots", 2);
    rdlm_segment_t a, b, c;
    int status;
    pid_t child;

    (void)state;
    assert_int_equal(rdlm_segment_attach(&p, &a), RDLM_OK);
    child = fork();
    if (child == 0) {
        _exit(rdlm_segment_attach(&p, &b) == RDLM_OK ? 0 : 1); /* dies holding slot 1 */
    }
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(rdlm_segment_attach(&p, &b), RDLM_OK); /* reclaims the dead slot */
    assert_int_equal(b.self_slot, 1);
    assert_int_equal(rdlm_segment_attach(&p, &c), RDLM_ERR_NO_RESOURCE);
    assert_false(rdlm_segment_owner_alive(&a, RDLM_OWNER_MAKE(1, 1))); /* old generation */
    assert_true(rdlm_segment_owner_alive(&a, b.self_owner));
    rdlm_segment_detach(&b);
    rdlm_segment_detach(&a);
}

/* One scribble on the header: the field at off (size bytes) gets value. */
typedef struct scribble {
    const char *field;
    size_t off, size;
    uint64_t value;
} scribble_t;

#define HDR_SIZEOF(f) sizeof(((rdlm_seg_header_t *)0)->f)
#define SCRIBBLE(f, v)                                                                     \
    ((scribble_t){#f, offsetof(rdlm_seg_header_t, f), HDR_SIZEOF(f), (v)})

static void poke(void *base, const scribble_t *s, uint64_t *old_p)
{
    uint32_t v32 = (uint32_t)s->value;

    *old_p = 0;
    memcpy(old_p, (char *)base + s->off, s->size);
    memcpy((char *)base + s->off, s->size == 4 ? (void *)&v32 : (void *)&s->value, s->size);
}

static void unpoke(void *base, const scribble_t *s, uint64_t old)
{
    memcpy((char *)base + s->off, &old, s->size);
}

static void corrupt_header_while_attached_is_refused_not_replaced(void **state)
{
    rdlm_segment_params_t p = params("hdr", 4);
    rdlm_segment_t a, b;
    uint64_t old;

    (void)state;
    assert_int_equal(rdlm_segment_attach(&p, &a), RDLM_OK);
    const scribble_t scribbles[] = {
        SCRIBBLE(magic, 0),
        SCRIBBLE(layout, RDLM_SEG_LAYOUT + 1),
        SCRIBBLE(capacity, UINT32_MAX),
        SCRIBBLE(table_size, a.hdr->table_size + 1),
        SCRIBBLE(max_procs, 0),
        SCRIBBLE(max_procs, RDLM_MAX_PROCS + 1),
        SCRIBBLE(bytes, a.hdr->bytes + 4096),
        SCRIBBLE(slots_offset, a.hdr->slots_offset + 64),
        SCRIBBLE(entries_offset, 1ull << 40),
        SCRIBBLE(names_offset, a.hdr->names_offset - 64),
        SCRIBBLE(slot_hwm, UINT32_MAX),
    };
    for (size_t i = 0; i < sizeof(scribbles) / sizeof(scribbles[0]); i++) {
        rdlm_status_t st;

        poke(a.hdr, &scribbles[i], &old);
        st = rdlm_segment_attach(&p, &b);
        unpoke(a.hdr, &scribbles[i], old);
        if (st != RDLM_ERR_CORRUPT) {
            fail_msg("header.%s = %#llx: attach returned %d, replaced_stale %d",
                     scribbles[i].field, (unsigned long long)scribbles[i].value, (int)st,
                     st == RDLM_OK && b.replaced_stale);
        }
    }
    assert_int_equal(rdlm_segment_attach(&p, &b), RDLM_OK); /* untouched: still ours */
    assert_false(b.created);
    assert_int_equal(rdlm_segment_live_procs(&b), 2);
    rdlm_segment_detach(&b);
    rdlm_segment_detach(&a);
    assert_false(shm_exists());
}

static void truncated_segment_while_attached_is_refused_not_replaced(void **state)
{
    rdlm_segment_params_t p = params("trunc", 4);
    rdlm_segment_t a, b;
    char name[96];
    int fd;

    (void)state;
    assert_int_equal(rdlm_segment_attach(&p, &a), RDLM_OK);
    job_path(name, sizeof(name), ".seg");
    fd = open(name, O_RDWR);
    assert_true(fd >= 0);
    /* Only the names at the end go: this process touches the header and slots only. */
    assert_int_equal(ftruncate(fd, (off_t)(a.hdr->bytes - 4096)), 0);
    assert_int_equal(rdlm_segment_attach(&p, &b), RDLM_ERR_CORRUPT);
    assert_int_equal(ftruncate(fd, (off_t)a.hdr->bytes), 0);
    close(fd);
    assert_int_equal(rdlm_segment_live_procs(&a), 1);
    rdlm_segment_detach(&a);
    assert_false(shm_exists());
}

static void scribbled_slot_hwm_is_clamped_for_the_attached(void **state)
{
    rdlm_segment_params_t p = params("hwm", 4);
    rdlm_segment_t a;

    (void)state;
    assert_int_equal(rdlm_segment_attach(&p, &a), RDLM_OK);
    rdlm_store(&a.hdr->slot_hwm, UINT32_MAX, RDLM_RELAXED);
    assert_int_equal(rdlm_segment_live_procs(&a), 1);
    assert_true(rdlm_segment_owner_alive(&a, a.self_owner));
    rdlm_segment_detach(&a); /* scans the slots: must stay inside the mapping */
    assert_false(shm_exists());
}

static void flock_holder_keeps_segment_even_without_live_slot(void **state)
{
    rdlm_segment_params_t p = params("flock", 4);
    rdlm_segment_t a, b;

    (void)state;
    assert_int_equal(rdlm_segment_attach(&p, &a), RDLM_OK);
    /* a's slot no longer shows it (as if an attacher's slot were wiped), but a still
     * holds the segment: it must be joined, not replaced under a. */
    rdlm_store(&a.slots[a.self_slot].state, RDLM_SLOT_FREE, RDLM_RELEASE);
    assert_int_equal(rdlm_segment_live_procs(&a), 0);
    assert_int_equal(rdlm_segment_attach(&p, &b), RDLM_OK);
    assert_false(b.created);
    assert_false(b.replaced_stale);
    assert_ptr_equal(b.hdr, a.hdr);
    rdlm_segment_detach(&b);
    assert_true(shm_exists()); /* a still holds it */
    rdlm_segment_detach(&a);
    assert_false(shm_exists());
}

/* The user's default directory, made as attach would (a test may need it first). */
static void user_dir(char *buf, size_t len)
{
    snprintf(buf, len, "/dev/shm/rdlm-%u", (unsigned)geteuid());
    (void)mkdir(buf, 0700);
}

static void segment_lives_in_a_private_directory_of_the_user(void **state)
{
    rdlm_segment_params_t p = params("place", 4);
    rdlm_segment_t seg;
    char dir[64];
    struct stat st;

    (void)state;
    assert_int_equal(rdlm_segment_attach(&p, &seg), RDLM_OK);
    assert_true(shm_exists());
    snprintf(dir, sizeof(dir), "/dev/shm/rdlm-%u", (unsigned)geteuid());
    assert_int_equal(lstat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0700);
    assert_int_equal(st.st_uid, geteuid());
    rdlm_segment_detach(&seg);
    assert_false(shm_exists());
    assert_int_equal(lstat(dir, &st), 0); /* kept: the name stays the user's */
}

/* A symlink in place of the job's file with suffix: attach returns
 * RDLM_ERR_PERMISSION and leaves the link and its target as they were. */
static void symlink_is_refused(const char *tag, const char *suffix)
{
    rdlm_segment_params_t p = params(tag, 4);
    rdlm_segment_t seg;
    char dir[64], link[96], target[96], buf[16] = {0};
    struct stat st;
    int fd;

    user_dir(dir, sizeof(dir));
    snprintf(target, sizeof(target), "/dev/shm/ut-%d-target", (int)getpid());
    fd = open(target, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "target", 6), 6);
    close(fd);
    job_path(link, sizeof(link), suffix);
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(rdlm_segment_attach(&p, &seg), RDLM_ERR_PERMISSION);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    fd = open(target, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(read(fd, buf, sizeof(buf)), 6);
    close(fd);
    assert_string_equal(buf, "target");
    unlink(link);
    unlink(target);
    job_path(link, sizeof(link), ".lock");
    unlink(link);
}

static void symlinked_segment_or_lock_file_is_refused_with_permission(void **state)
{
    (void)state;
    symlink_is_refused("symseg", ".seg");
    symlink_is_refused("symlock", ".lock");
}

static void given_directory_is_created_private_or_refused_when_unsafe(void **state)
{
    rdlm_segment_params_t p = params("dir", 4);
    rdlm_segment_t seg;
    char dir[96], other[112];
    struct stat st;
    int fd;

    (void)state;
    snprintf(dir, sizeof(dir), "/dev/shm/ut-%d-dir", (int)getpid());
    p.dir = dir;
    assert_int_equal(rdlm_segment_attach(&p, &seg), RDLM_OK); /* created */
    assert_int_equal(lstat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0700);
    assert_false(shm_exists()); /* not in the default directory */
    rdlm_segment_detach(&seg);
    assert_int_equal(chmod(dir, 0750), 0);
    assert_int_equal(rdlm_segment_attach(&p, &seg), RDLM_ERR_PERMISSION);
    assert_int_equal(chmod(dir, 0700), 0);
    snprintf(other, sizeof(other), "%s-link", dir);
    assert_int_equal(symlink(dir, other), 0);
    p.dir = other;
    assert_int_equal(rdlm_segment_attach(&p, &seg), RDLM_ERR_PERMISSION);
    unlink(other);
    fd = open(other, O_RDWR | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(rdlm_segment_attach(&p, &seg), RDLM_ERR_PERMISSION); /* a file */
    unlink(other);
    p.dir = "relative/dir";
    assert_int_equal(rdlm_segment_attach(&p, &seg), RDLM_ERR_BAD_CONFIG);
    assert_int_equal(rmdir(dir), 0); /* empty: the last detach removed both files */
}

int main(void)
{
    char dir[64];

    user_dir(dir, sizeof(dir)); /* for the tests that plant files before an attach */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_attach_creates_second_attaches_last_detach_removes),
        cmocka_unit_test(segment_of_dead_job_is_replaced_with_larger_epoch),
        cmocka_unit_test(corrupt_segment_is_replaced),
        cmocka_unit_test(group_readable_segment_is_refused_untouched),
        cmocka_unit_test(slots_of_dead_processes_are_reclaimed_and_exhaustion_is_an_error),
        cmocka_unit_test(corrupt_header_while_attached_is_refused_not_replaced),
        cmocka_unit_test(truncated_segment_while_attached_is_refused_not_replaced),
        cmocka_unit_test(scribbled_slot_hwm_is_clamped_for_the_attached),
        cmocka_unit_test(flock_holder_keeps_segment_even_without_live_slot),
        cmocka_unit_test(segment_lives_in_a_private_directory_of_the_user),
        cmocka_unit_test(symlinked_segment_or_lock_file_is_refused_with_permission),
        cmocka_unit_test(given_directory_is_created_private_or_refused_when_unsafe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
