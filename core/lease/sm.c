/* sm.c: written in this change */
