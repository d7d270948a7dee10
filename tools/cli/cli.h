/*
 * The command-line conventions every rdlm tool and benchmark follows:
 *   --version (-V where free)  one line "<tool> (rdlm) X.Y.Z" on stdout, exit 0;
 *   --help, -h                 the full usage on stdout, exit 0;
 *   a bad flag or value        ONE line on stderr naming it and pointing at --help,
 *                              exit 2 (RDLM_CLI_EXIT_USAGE).
 * Parse with getopt_long, opterr = 0 and an optstring starting with ':', and hand
 * its '?' and ':' results to rdlm_cli_bad_option.
 */
#ifndef RDLM_CLI_H
#define RDLM_CLI_H

#include <getopt.h>

#define RDLM_CLI_EXIT_USAGE 2 /**< exit status of bad usage */

/**
 * Print "<tool> (rdlm) X.Y.Z" (the version this tool was built with) on stdout.
 * Returns 0, the exit status. Not thread-safe (stdio only).
 */
int rdlm_cli_version(const char *tool);

/**
 * Print one line "<tool>: <printf message>; try '<tool> --help'" on stderr.
 * Returns RDLM_CLI_EXIT_USAGE.
 */
int rdlm_cli_usage_error(const char *tool, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * Report what getopt_long just refused (c is its '?' or ':' result; optstring the one
 * given to it, starting with ':') as one rdlm_cli_usage_error line: "unknown option
 * '-Q'", "option '--bench' needs a value", "option '--json' takes no value".
 * Returns RDLM_CLI_EXIT_USAGE.
 */
int rdlm_cli_bad_option(const char *tool, int c, const char *optstring, char *const *argv);

/**
 * Report that value is not valid for the option getopt_long returned as c, as one
 * rdlm_cli_usage_error line "invalid value 'V' for --name" (the long name when
 * longopts has one for c, else "-c"). Returns RDLM_CLI_EXIT_USAGE.
 */
int rdlm_cli_bad_value(const char *tool, int c, const struct option *longopts,
                       const char *value);

#endif
