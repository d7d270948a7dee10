/* The RDLM_* configuration table and its parser (see config.h). */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "log.h"

extern char **environ;

int rdlm_config_job_valid(const char *name)
{
    size_t len = strlen(name);

    if (len == 0 || len > RDLM_JOB_MAX) {
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-')) {
            return 0;
        }
    }
    return 1;
}

static int rdlm_config_set_LEVEL(unsigned *out, const char *value, uint32_t min,
                                 uint32_t max)
{
    (void)min;
    (void)max;
    for (unsigned l = 0; l < RDLM_LOG_LEVEL_COUNT; l++) {
        if (strcmp(value, rdlm_log_level_name((rdlm_log_level_t)l)) == 0) {
            *out = l;
            return 1;
        }
    }
    return 0;
}

/* The index of value among names[0..count), or -1: the parser of every name list. */
static int rdlm_config_name_index(const char *const *names, unsigned count,
                                  const char *value)
{
    for (unsigned i = 0; i < count; i++) {
        if (strcmp(value, names[i]) == 0) {
            return (int)i;
        }
    }
    return -1;
}

/* For the enum type_t of name list LIST (config.h): its name table,
 * rdlm_config_<lower>_name() (NULL out of range) and the parser of config type TYPE. */
#define RDLM_CONFIG_NAMED_ENUM(type_t, TYPE, lower, LIST, count)                           \
    static const char *const rdlm_config_##lower##_names[] = {                             \
        LIST(RDLM_CONFIG_ENUM_NAME_)};                                                     \
    const char *rdlm_config_##lower##_name(type_t v)                                       \
    {                                                                                      \
        return (unsigned)v < (count) ? rdlm_config_##lower##_names[v] : NULL;              \
    }                                                                                      \
    static int rdlm_config_set_##TYPE(type_t *out, const char *value, uint32_t min,        \
                                      uint32_t max)                                        \
    {                                                                                      \
        int i = rdlm_config_name_index(rdlm_config_##lower##_names, (count), value);       \
                                                                                           \
        (void)min;                                                                         \
        (void)max;                                                                         \
        if (i < 0) {                                                                       \
            return 0;                                                                      \
        }                                                                                  \
        *out = (type_t)i;                                                                  \
        return 1;                                                                          \
    }
#define RDLM_CONFIG_ENUM_NAME_(sym, name) name,

RDLM_CONFIG_NAMED_ENUM(rdlm_progress_mode_t, PROGRESS, progress, RDLM_PROGRESS_LIST,
                       RDLM_PROGRESS_MODE_COUNT)
RDLM_CONFIG_NAMED_ENUM(rdlm_verbs_connect_t, VERBS_CONNECT, verbs_connect,
                       RDLM_VERBS_CONNECT_LIST, RDLM_VERBS_CONNECT_COUNT)
RDLM_CONFIG_NAMED_ENUM(rdlm_switch_t, SWITCH, switch, RDLM_SWITCH_LIST, RDLM_SWITCH_COUNT)
RDLM_CONFIG_NAMED_ENUM(rdlm_pmpi_barrier_t, PMPI_BARRIER, pmpi_barrier,
                       RDLM_PMPI_BARRIER_LIST, RDLM_PMPI_BARRIER_COUNT)

static int rdlm_config_set_UINT(uint32_t *out, const char *value, uint32_t min,
                                uint32_t max)
{
    char *end;
    unsigned long long v;

    if (value[0] < '0' || value[0] > '9') {
        return 0;
    }
    errno = 0;
    v = strtoull(value, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max) {
        return 0;
    }
    *out = (uint32_t)v;
    return 1;
}

static int rdlm_config_set_BOOL(int *out, const char *value, uint32_t min, uint32_t max)
{
    (void)min;
    (void)max;
    if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0) {
        return 0;
    }
    *out = value[0] == '1';
    return 1;
}

static int rdlm_config_set_JOB(char *out, const char *value, uint32_t min, uint32_t max)
{
    (void)min;
    (void)max;
    if (value[0] != '\0' && !rdlm_config_job_valid(value)) {
        return 0;
    }
    strcpy(out, value); /* length checked by rdlm_config_job_valid */
    return 1;
}

int rdlm_config_host_valid(const char *host)
{
    size_t len = strlen(host), digits_dots = strspn(host, "0123456789.");
    struct in_addr ip;

    if (digits_dots == len) {
        return len > 0 && inet_pton(AF_INET, host, &ip) == 1; /* 10.0.0.256 is no name */
    }
    return len <= RDLM_HOST_MAX && isalnum((unsigned char)host[0]) &&
           strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                        "0123456789._-") == len;
}

int rdlm_config_hostport_parse(const char *text, char *host_p, uint16_t *port_p)
{
    char host[RDLM_HOST_MAX + 1];
    const char *colon = strrchr(text, ':');
    uint32_t port;

    if (colon == NULL || (size_t)(colon - text) > RDLM_HOST_MAX ||
        !rdlm_config_set_UINT(&port, colon + 1, 1, 65535)) {
        return 0;
    }
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    if (!rdlm_config_host_valid(host)) {
        return 0;
    }
    if (host_p != NULL) {
        strcpy(host_p, host);
    }
    if (port_p != NULL) {
        *port_p = (uint16_t)port;
    }
    return 1;
}

int rdlm_config_addr_parse(const char *text, uint32_t *ip_p, uint16_t *port_p)
{
    char host[RDLM_HOST_MAX + 1];
    struct in_addr ip;
    uint16_t port;

    if (!rdlm_config_hostport_parse(text, host, &port) ||
        inet_pton(AF_INET, host, &ip) != 1) {
        return 0;
    }
    if (ip_p != NULL) {
        *ip_p = ip.s_addr;
    }
    if (port_p != NULL) {
        *port_p = port;
    }
    return 1;
}

static int rdlm_config_set_IP(char *out, const char *value, uint32_t min, uint32_t max)
{
    struct in_addr ip;

    (void)min;
    (void)max;
    if (value[0] != '\0' && inet_pton(AF_INET, value, &ip) != 1) {
        return 0;
    }
    strcpy(out, value); /* inet_pton accepts at most RDLM_IP_MAX characters */
    return 1;
}

static int rdlm_config_set_ADDR(char *out, const char *value, uint32_t min, uint32_t max)
{
    uint32_t port;

    (void)min;
    (void)max;
    if (value[0] != '\0' && !rdlm_config_hostport_parse(value, NULL, NULL) &&
        !(value[0] == ':' && rdlm_config_set_UINT(&port, value + 1, 1, 65535)) &&
        strcmp(value, "launcher") != 0) {
        return 0;
    }
    strcpy(out, value); /* length bounded by the parse */
    return 1;
}

int rdlm_config_net_parse(const char *text, uint32_t *ip_p, unsigned *len_p)
{
    char host[RDLM_NET_MAX + 1];
    size_t host_len = strcspn(text, "/");
    uint32_t len = 32;
    struct in_addr ip;

    if (host_len > RDLM_IP_MAX ||
        (text[host_len] == '/' &&
         !rdlm_config_set_UINT(&len, text + host_len + 1, 0, 32))) {
        return 0;
    }
    memcpy(host, text, host_len);
    host[host_len] = '\0';
    if (inet_pton(AF_INET, host, &ip) != 1) {
        return 0;
    }
    if (ip_p != NULL) {
        *ip_p = ip.s_addr;
    }
    if (len_p != NULL) {
        *len_p = len;
    }
    return 1;
}

static int rdlm_config_set_NET(char *out, const char *value, uint32_t min, uint32_t max)
{
    (void)min;
    (void)max;
    if (value[0] != '\0' && !rdlm_config_net_parse(value, NULL, NULL)) {
        return 0;
    }
    strcpy(out, value); /* length bounded by the parse */
    return 1;
}

int rdlm_config_addrs_parse(const char *text, char out[][RDLM_ADDR_MAX + 1], unsigned max,
                            unsigned *n_p)
{
    unsigned n = 0;

    while (*text != '\0') {
        size_t len = strcspn(text, ",");

        if (n == max || len == 0 || len > RDLM_ADDR_MAX) {
            return 0;
        }
        memcpy(out[n], text, len);
        out[n][len] = '\0';
        if (!rdlm_config_hostport_parse(out[n], NULL, NULL)) {
            return 0;
        }
        n++;
        text += len;
        if (*text == ',' && *++text == '\0') {
            return 0; /* trailing comma */
        }
    }
    *n_p = n;
    return n > 0;
}

static int rdlm_config_set_ADDRS(char *out, const char *value, uint32_t min, uint32_t max)
{
    char addrs[RDLM_ADDRS_COUNT][RDLM_ADDR_MAX + 1];
    unsigned n;

    (void)min;
    (void)max;
    if (value[0] != '\0' && !rdlm_config_addrs_parse(value, addrs, RDLM_ADDRS_COUNT, &n)) {
        return 0;
    }
    strcpy(out, value); /* at most RDLM_ADDRS_COUNT addresses and commas: fits */
    return 1;
}

static int rdlm_config_set_LOG_FILE(char *out, const char *value, uint32_t min,
                                    uint32_t max)
{
    char path[PATH_MAX];

    (void)min;
    (void)max;
    if (strlen(value) > RDLM_LOG_FILE_MAX ||
        !rdlm_log_file_expand(value, path, sizeof(path))) {
        return 0;
    }
    strcpy(out, value); /* length checked above */
    return 1;
}

static int rdlm_config_set_PATH(char *out, const char *value, uint32_t min, uint32_t max)
{
    (void)min;
    (void)max;
    if (strlen(value) > RDLM_PATH_MAX) {
        return 0;
    }
    strcpy(out, value); /* length checked above */
    return 1;
}

int rdlm_config_uint_parse(const char *text, uint32_t min, uint32_t max, uint32_t *out_p)
{
    return rdlm_config_set_UINT(out_p, text, min, max);
}

const char *rdlm_config_lookup(const char *const *envp, const char *name)
{
    size_t len = strlen(name);

    for (; *envp != NULL; envp++) {
        if (strncmp(*envp, name, len) == 0 && (*envp)[len] == '=') {
            return *envp + len + 1;
        }
    }
    return NULL;
}

static int rdlm_config_known(const char *entry)
{
    static const char *const names[] = {
#define RDLM_CONFIG_NAME_(field, var, type, def, min, max, help) var,
        RDLM_CONFIG_LIST(RDLM_CONFIG_NAME_)
#undef RDLM_CONFIG_NAME_
    };
    size_t len = strcspn(entry, "=");

    if (strncmp(entry, "RDLM_UCX_", 9) == 0) {
        return 1; /* rdlm's own UCX configuration prefix */
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strlen(names[i]) == len && strncmp(entry, names[i], len) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Where each type's setter writes: scalars by address, the job array as itself. */
#define RDLM_CONFIG_DEST_LEVEL(f) (&(f))
#define RDLM_CONFIG_DEST_UINT(f) (&(f))
#define RDLM_CONFIG_DEST_BOOL(f) (&(f))
#define RDLM_CONFIG_DEST_JOB(f) (f)
#define RDLM_CONFIG_DEST_PROGRESS(f) (&(f))
#define RDLM_CONFIG_DEST_VERBS_CONNECT(f) (&(f))
#define RDLM_CONFIG_DEST_SWITCH(f) (&(f))
#define RDLM_CONFIG_DEST_PMPI_BARRIER(f) (&(f))
#define RDLM_CONFIG_DEST_IP(f) (f)
#define RDLM_CONFIG_DEST_ADDR(f) (f)
#define RDLM_CONFIG_DEST_ADDRS(f) (f)
#define RDLM_CONFIG_DEST_NET(f) (f)
#define RDLM_CONFIG_DEST_LOG_FILE(f) (f)
#define RDLM_CONFIG_DEST_PATH(f) (f)

static const char rdlm_config_allowed_LEVEL[] = "one of error, warn, info, debug, trace";
static const char rdlm_config_allowed_UINT[] = "a decimal integer in range";
static const char rdlm_config_allowed_BOOL[] = "0 or 1";
static const char rdlm_config_allowed_JOB[] = "1-32 of [A-Za-z0-9._-]";
static const char rdlm_config_allowed_PROGRESS[] = "one of auto, poll, thread";
static const char rdlm_config_allowed_VERBS_CONNECT[] = "one of cm, exchange";
static const char rdlm_config_allowed_SWITCH[] = "one of auto, on, off";
static const char rdlm_config_allowed_PMPI_BARRIER[] = "one of auto, 1, 0";
static const char rdlm_config_allowed_IP[] = "an IPv4 address, e.g. 10.0.0.1";
static const char rdlm_config_allowed_ADDR[] =
    "host:port, host an IPv4 address or a name, :port (the host from Slurm), or launcher "
    "(host and port from PMIx or Slurm), e.g. 10.0.0.1:7000, node01:7000, :7000 or "
    "launcher";
static const char rdlm_config_allowed_ADDRS[] =
    "1-7 comma-separated host:port, e.g. 10.0.0.1:7000,node02:7000";
static const char rdlm_config_allowed_NET[] =
    "an IPv4 network a.b.c.d/len or address a.b.c.d, e.g. 10.1.0.0/16";
static const char rdlm_config_allowed_LOG_FILE[] =
    "a path of at most 255 bytes whose only % sequences are %h, %r, %p and %%";
static const char rdlm_config_allowed_PATH[] = "a path of at most 1023 bytes";

rdlm_status_t rdlm_config_parse(const char *const *envp, rdlm_config_t *cfg_p)
{
    rdlm_config_t cfg;
    rdlm_status_t status = RDLM_OK;
    const char *value;
    char range[32];

    memset(&cfg, 0, sizeof(cfg));
#define RDLM_CONFIG_PARSE_(field, var, type, def, min, max, help)                          \
    if (!rdlm_config_set_##type(RDLM_CONFIG_DEST_##type(cfg.field), def, min, max)) {      \
        rdlm_error("built-in default of %s is invalid", var);                              \
        status = RDLM_ERR_BAD_CONFIG;                                                      \
    }                                                                                      \
    value = rdlm_config_lookup(envp, var);                                                 \
    if (value != NULL &&                                                                   \
        !rdlm_config_set_##type(RDLM_CONFIG_DEST_##type(cfg.field), value, min, max)) {    \
        if ((max) != 0) {                                                                  \
            snprintf(range, sizeof(range), " [%u..%u]", (unsigned)(min), (unsigned)(max)); \
        }                                                                                  \
        rdlm_error("%s=\"%s\" is invalid: expected %s%s", var, value,                      \
                   rdlm_config_allowed_##type, (max) != 0 ? range : "");                   \
        (void)rdlm_config_set_##type(RDLM_CONFIG_DEST_##type(cfg.field), def, min, max);   \
        status = RDLM_ERR_BAD_CONFIG;                                                      \
    }
    RDLM_CONFIG_LIST(RDLM_CONFIG_PARSE_)
#undef RDLM_CONFIG_PARSE_

    for (; *envp != NULL; envp++) {
        if (strncmp(*envp, "RDLM_", 5) == 0 && !rdlm_config_known(*envp)) {
            rdlm_warn("unknown variable %.*s ignored (rdlm_info lists the known ones)",
                      (int)strcspn(*envp, "="), *envp);
        }
    }
    *cfg_p = cfg;
    return status;
}

rdlm_status_t rdlm_config_load(rdlm_config_t *cfg_p)
{
    rdlm_status_t status = rdlm_config_parse((const char *const *)environ, cfg_p);

    if (status == RDLM_OK ||
        status == RDLM_ERR_BAD_CONFIG) { /* the defaults for bad ones */
        rdlm_log_set_level((rdlm_log_level_t)cfg_p->log_level);
        rdlm_log_open_file(cfg_p->log_file);
    }
    return status;
}

/* What a value of each type may be, for the table: a decimal integer's range, else
 * the type's text of the parse error. */
#define RDLM_CONFIG_ALLOWED_UINT(min, max) #min ".." #max
#define RDLM_CONFIG_ALLOWED_LEVEL(min, max) rdlm_config_allowed_LEVEL
#define RDLM_CONFIG_ALLOWED_BOOL(min, max) rdlm_config_allowed_BOOL
#define RDLM_CONFIG_ALLOWED_JOB(min, max) rdlm_config_allowed_JOB
#define RDLM_CONFIG_ALLOWED_PROGRESS(min, max) rdlm_config_allowed_PROGRESS
#define RDLM_CONFIG_ALLOWED_VERBS_CONNECT(min, max) rdlm_config_allowed_VERBS_CONNECT
#define RDLM_CONFIG_ALLOWED_SWITCH(min, max) rdlm_config_allowed_SWITCH
#define RDLM_CONFIG_ALLOWED_PMPI_BARRIER(min, max) rdlm_config_allowed_PMPI_BARRIER
#define RDLM_CONFIG_ALLOWED_IP(min, max) rdlm_config_allowed_IP
#define RDLM_CONFIG_ALLOWED_ADDR(min, max) rdlm_config_allowed_ADDR
#define RDLM_CONFIG_ALLOWED_ADDRS(min, max) rdlm_config_allowed_ADDRS
#define RDLM_CONFIG_ALLOWED_NET(min, max) rdlm_config_allowed_NET
#define RDLM_CONFIG_ALLOWED_LOG_FILE(min, max) rdlm_config_allowed_LOG_FILE
#define RDLM_CONFIG_ALLOWED_PATH(min, max) rdlm_config_allowed_PATH

static const rdlm_config_entry_t rdlm_config_entries[RDLM_CONFIG_COUNT] = {
#define RDLM_CONFIG_ENTRY_(field, var, type, def, min, max, help)                          \
    {var, def, RDLM_CONFIG_ALLOWED_##type(min, max), help, min, max},
    RDLM_CONFIG_LIST(RDLM_CONFIG_ENTRY_)
#undef RDLM_CONFIG_ENTRY_
};

const rdlm_config_entry_t *rdlm_config_entry(rdlm_config_index_t i)
{
    return (unsigned)i < RDLM_CONFIG_COUNT ? &rdlm_config_entries[i] : NULL;
}

/* Each type's value as its variable would be set. */
#define RDLM_CONFIG_SHOW_LEVEL(buf, len, v)                                                \
    snprintf(buf, len, "%s", rdlm_log_level_name((rdlm_log_level_t)(v)))
#define RDLM_CONFIG_SHOW_UINT(buf, len, v) snprintf(buf, len, "%u", (unsigned)(v))
#define RDLM_CONFIG_SHOW_BOOL(buf, len, v) snprintf(buf, len, "%d", (v))
#define RDLM_CONFIG_SHOW_JOB(buf, len, v) snprintf(buf, len, "%s", (v))
#define RDLM_CONFIG_SHOW_PROGRESS(buf, len, v)                                             \
    snprintf(buf, len, "%s", rdlm_config_progress_name(v))
#define RDLM_CONFIG_SHOW_VERBS_CONNECT(buf, len, v)                                        \
    snprintf(buf, len, "%s", rdlm_config_verbs_connect_name(v))
#define RDLM_CONFIG_SHOW_SWITCH(buf, len, v)                                               \
    snprintf(buf, len, "%s", rdlm_config_switch_name(v))
#define RDLM_CONFIG_SHOW_PMPI_BARRIER(buf, len, v)                                         \
    snprintf(buf, len, "%s", rdlm_config_pmpi_barrier_name(v))
#define RDLM_CONFIG_SHOW_IP(buf, len, v) snprintf(buf, len, "%s", (v))
#define RDLM_CONFIG_SHOW_ADDR(buf, len, v) snprintf(buf, len, "%s", (v))
#define RDLM_CONFIG_SHOW_ADDRS(buf, len, v) snprintf(buf, len, "%s", (v))
#define RDLM_CONFIG_SHOW_NET(buf, len, v) snprintf(buf, len, "%s", (v))
#define RDLM_CONFIG_SHOW_LOG_FILE(buf, len, v) snprintf(buf, len, "%s", (v))
#define RDLM_CONFIG_SHOW_PATH(buf, len, v) snprintf(buf, len, "%s", (v))

void rdlm_config_value(const rdlm_config_t *cfg, rdlm_config_index_t i, char *buf,
                       size_t len)
{
    buf[0] = '\0';
    switch (i) {
#define RDLM_CONFIG_VALUE_(field, var, type, def, min, max, help)                          \
    case RDLM_CONFIG_INDEX_##field:                                                        \
        RDLM_CONFIG_SHOW_##type(buf, len, cfg->field);                                     \
        break;
        RDLM_CONFIG_LIST(RDLM_CONFIG_VALUE_)
#undef RDLM_CONFIG_VALUE_
    default:
        break;
    }
}

const char *rdlm_config_job_effective(const rdlm_config_t *cfg, char job[RDLM_JOB_MAX + 1])
{
    const char *source;

    if (cfg->job[0] != '\0') {
        strcpy(job, cfg->job); /* validated by the parse: <= RDLM_JOB_MAX */
        return "RDLM_JOB";
    }
    source = rdlm_launch_job((const char *const *)environ, job);
    if (source == NULL) {
        strcpy(job, "default");
    }
    return source;
}
