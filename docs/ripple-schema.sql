-- The Ripple family's `users` and `tokens` tables, as tokend reads and writes them (MariaDB / MySQL).
--
-- Written by the tokend project from the columns the family's programs (its API, its website hanayo, its
-- game server) use; it is not a copy of any of their files. tokend's tests make their Ripple-family
-- source databases from this file (`tokend import-ripple`, the in-place mode), and an operator can hold
-- it against a real database to check that the columns tokend needs are there, with these types.
--
-- A real Ripple-family database has many more tables (scores, beatmaps, user stats, ...) and these two
-- tables may have more columns than are listed here; tokend never reads or changes those.
--
-- Where the family's programs always write a column, it has a default here (the family's own schema may
-- have none) so that a test can insert a row naming only the columns it is about.
--
-- Each statement ends with a semicolon at the end of a line; no comment holds one at a line's end.

-- One row per account. `privileges` is a bit set: 1 = UserPublic, 2 = UserNormal; an account without
-- UserNormal is banned, and tokend then gives its tokens no power at all; one with UserNormal but without
-- UserPublic is restricted, and its tokens keep what it may hold (tokend's src/auth/privileges.ts). `password_md5` holds, with `password_version` 2, a
-- bcrypt hash of the lower-case MD5 hex of the password; version 1 is the older, unsalted MD5 form.
-- `username_safe` is the name the family compares: lower case, spaces as underscores.
CREATE TABLE `users` (
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `username` varchar(30) NOT NULL,
  `username_safe` varchar(30) NOT NULL,
  `password_md5` varchar(127) NOT NULL,
  `salt` varchar(32) NOT NULL DEFAULT '',
  `email` varchar(254) NOT NULL DEFAULT '',
  `register_datetime` int(10) NOT NULL DEFAULT 0, -- unix seconds
  `rank` tinyint(1) NOT NULL DEFAULT 1,
  `allowed` tinyint(1) NOT NULL DEFAULT 1,
  `latest_activity` int(10) NOT NULL DEFAULT 0, -- unix seconds
  `silence_end` int(11) NOT NULL DEFAULT 0,
  `silence_reason` varchar(127) NOT NULL DEFAULT '',
  `password_version` tinyint(4) NOT NULL DEFAULT 1,
  `privileges` bigint(11) NOT NULL DEFAULT 0,
  `donor_expire` int(11) NOT NULL DEFAULT 0,
  `flags` int(11) NOT NULL DEFAULT 0,
  `achievements_version` int(11) NOT NULL DEFAULT 4,
  `notes` mediumtext NULL,
  `ban_datetime` varchar(30) NOT NULL DEFAULT '0',
  PRIMARY KEY (`id`),
  UNIQUE KEY `username_safe` (`username_safe`)
) DEFAULT CHARSET=utf8mb4;

-- One row per API token. `user` is the owner's id written as text. `token` is the MD5 hex of the
-- secret (the secret itself is never stored). `private` = 1 marks a session token: hanayo writes one at
-- each sign-in, with `privileges` 0, and leaves it at sign-out (it clears only its cookie); the family's
-- API gives such a token every privilege but Bancho that its owner may hold. `last_updated` is the last use, in unix seconds. The family
-- indexes nothing here but the primary key.
CREATE TABLE `tokens` (
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `user` varchar(31) NOT NULL,
  `privileges` int(11) NOT NULL,
  `description` varchar(255) NOT NULL,
  `token` varchar(127) NOT NULL,
  `private` tinyint(4) NOT NULL,
  `last_updated` int(11) NOT NULL DEFAULT 0,
  PRIMARY KEY (`id`)
) DEFAULT CHARSET=utf8mb4;
