/* cmd.c: written in this change */
