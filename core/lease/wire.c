/* wire.c: written in this change */
