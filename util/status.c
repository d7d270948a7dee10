/* rdlm_status_str / rdlm_status_name, generated from RDLM_STATUS_LIST. */
#include <rdlm/status.h>

const char *rdlm_status_str(rdlm_status_t status)
{
    switch (status) {
#define RDLM_STATUS_TEXT_(name, value, text)                                               \
    case name:                                                                             \
        return text;
        RDLM_STATUS_LIST(RDLM_STATUS_TEXT_)
#undef RDLM_STATUS_TEXT_
    }
    return "unknown status";
}

const char *rdlm_status_name(rdlm_status_t status)
{
    switch (status) {
#define RDLM_STATUS_NAME_(name, value, text)                                               \
    case name:                                                                             \
        return #name;
        RDLM_STATUS_LIST(RDLM_STATUS_NAME_)
#undef RDLM_STATUS_NAME_
    }
    return "RDLM_?";
}
