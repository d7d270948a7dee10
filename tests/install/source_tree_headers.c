/* Built with the source tree's include/ as its only include path: no build tree and
 * no install, as a user who points -I at a checkout does. The public headers must
 * need no generated file, and their version must be the project's (argv[1]). */
#include <rdlm.h>
#include <rdlm/lease.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    unsigned major, minor, patch;

    if (argc != 2 || strcmp(argv[1], RDLM_VERSION_STRING) != 0) {
        fprintf(stderr, "RDLM_VERSION_STRING \"%s\", the project's \"%s\"\n",
                RDLM_VERSION_STRING, argc == 2 ? argv[1] : "?");
        return 1;
    }
    if (sscanf(RDLM_VERSION_STRING, "%u.%u.%u", &major, &minor, &patch) != 3 ||
        RDLM_VERSION_NUMBER != RDLM_VERSION_ENCODE(major, minor, patch)) {
        fprintf(stderr, "RDLM_VERSION_NUMBER 0x%x does not match \"%s\"\n",
                (unsigned)RDLM_VERSION_NUMBER, RDLM_VERSION_STRING);
        return 1;
    }
    printf("rdlm headers %s from the source tree\n", RDLM_VERSION_STRING);
    return 0;
}
