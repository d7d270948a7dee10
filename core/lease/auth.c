/* auth.c: written in this change */
