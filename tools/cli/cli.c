/* The tools' command-line conventions (cli.h). */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rdlm/version.h>

int rdlm_cli_version(const char *tool)
{
    printf("%s (rdlm) %s\n", tool, RDLM_VERSION_STRING);
    return 0;
}

int rdlm_cli_usage_error(const char *tool, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: ", tool);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "; try '%s --help'\n", tool);
    return RDLM_CLI_EXIT_USAGE;
}

/* 1 if getopt_long's error concerns the long option argv[optind - 1] rather than a
 * short option inside a cluster: a long option consumed its whole argument, and getopt
 * sets optopt to 0 (unknown long option) or to the option's value, which is not an
 * unknown short flag. */
static int rdlm_cli_error_is_long(int c, const char *optstring, const char *arg)
{
    if (strncmp(arg, "--", 2) != 0) {
        return 0;
    }
    if (c == ':') {
        return 1; /* a short flag missing its value ends its own argument */
    }
    return optopt == 0 || optopt > 255 || strchr(optstring, optopt) != NULL;
}

int rdlm_cli_bad_option(const char *tool, int c, const char *optstring, char *const *argv)
{
    const char *arg = argv[optind - 1];
    int name_len = (int)strcspn(arg, "=");

    if (!rdlm_cli_error_is_long(c, optstring, arg)) {
        return rdlm_cli_usage_error(
            tool, c == ':' ? "option '-%c' needs a value" : "unknown option '-%c'", optopt);
    }
    if (c == ':') {
        return rdlm_cli_usage_error(tool, "option '%s' needs a value", arg);
    }
    if (optopt != 0) {
        return rdlm_cli_usage_error(tool, "option '%.*s' takes no value", name_len, arg);
    }
    return rdlm_cli_usage_error(tool, "unknown option '%s'", arg);
}

int rdlm_cli_bad_value(const char *tool, int c, const struct option *longopts,
                       const char *value)
{
    for (; longopts->name != NULL; longopts++) {
        if (longopts->flag == NULL && longopts->val == c) {
            return rdlm_cli_usage_error(tool, "invalid value '%s' for --%s", value,
                                        longopts->name);
        }
    }
    return rdlm_cli_usage_error(tool, "invalid value '%s' for -%c", value, c);
}
