-- (f): a one-table upsert, what store_bench's plain table does.
\set n random(1, 9000000000000000000)
INSERT INTO files(path, content) VALUES('dir_' || (:n::bigint % 20) || '/p_' || :n, convert_to(rpad('c' || :n, 1024, 'x'), 'UTF8')) ON CONFLICT(path) DO UPDATE SET content=excluded.content;
