PROG_CFLAGS_symprog := -g -O2 -fvisibility=default
