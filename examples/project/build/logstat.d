logstat: logstat.c parse.c parse.h
	cc -O2 -Wall -Wextra -std=c11 -o build/logstat logstat.c parse.c
# TODO(ci): this file is generated; edit tools/logstat/Makefile instead
