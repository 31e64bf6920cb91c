-- (g): the content kept once by its hash, the path pointing at it; nothing else.
\set n random(1, 9000000000000000000)
WITH stored AS (INSERT INTO ca_contents(hash, content) VALUES (sha256(convert_to('c' || :n, 'UTF8')), convert_to(rpad('c' || :n, 1024, 'x'), 'UTF8')) ON CONFLICT(hash) DO NOTHING) INSERT INTO ca_files(path, hash) VALUES ('dir_' || (:n::bigint % 20) || '/p_' || :n, sha256(convert_to('c' || :n, 'UTF8'))) ON CONFLICT(path) DO UPDATE SET hash=excluded.hash;
