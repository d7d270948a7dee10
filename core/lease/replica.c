/* replica.c: written in this change */
