-- The Ripple family's `users` and `tokens` tables, as tokend reads and writes them (MariaDB / MySQL).
--
-- Written by the tokend project from the columns the family's programs (its API, its website hanayo, its
-- game server) use and the form its published database takes; it is not a copy of any of their files.
-- tokend's tests make their Ripple-family databases from this file (`tokend import-ripple`, the in-place
-- mode, the benchmarks), and an operator can hold it against a real database to check that the columns
-- tokend needs are there, with these types.
--
-- A real Ripple-family database has many more tables (scores, beatmaps, user stats, ...) and these two
-- tables may have more columns than are listed here; tokend never reads or changes those.
--
-- The family's database is latin1 (MySQL's latin1 is Windows-1252; the collation, latin1_swedish_ci, is
-- MySQL's default for it), and so is every table and text column in it: a text column holds only the
-- characters of that set. The first statement makes the database it runs in so; run this file in an
-- empty database.
--
-- Only the columns the family's own schema gives a default have one here. The others (`salt`, `email`,
-- `register_datetime`, `privileges`, and every column of `tokens` but `last_updated`) are written by the
-- family's programs in every INSERT, and a row that leaves one out is refused in MariaDB's strict mode.
--
-- Each statement ends with a semicolon at the end of a line; no comment holds one at a line's end.

ALTER DATABASE CHARACTER SET latin1 COLLATE latin1_swedish_ci;

-- One row per account. `privileges` is a bit set: 1 = UserPublic, 2 = UserNormal; an account without
-- UserNormal is banned, and tokend then gives its tokens no power at all; one with UserNormal but without
-- UserPublic is restricted, and its tokens keep what it may hold (tokend's src/auth/privileges.ts).
-- `password_md5` holds, with `password_version` 2, a bcrypt hash of the lower-case MD5 hex of the
-- password; version 1 is the older, unsalted MD5 form. `username_safe` is the name the family compares: the username trimmed, in lower case, spaces as underscores. Nothing makes it
-- unique but the website's check before it signs a user up (the table has no index on it), and the
-- website signs up only names of ASCII letters, digits, spaces and `_[]-`, 2 to 15 characters. A new
-- account is written with `salt` '', its `email`, `register_datetime` (unix seconds), `password_version`
-- 2 and `privileges` 1048576 (UserPendingVerification) until the game server verifies it.
CREATE TABLE `users` (
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `username` varchar(30) NOT NULL,
  `username_safe` varchar(30) NOT NULL,
  `password_md5` varchar(127) NOT NULL,
  `salt` varchar(32) NOT NULL,
  `email` varchar(254) NOT NULL,
  `register_datetime` int(10) NOT NULL,
  `rank` tinyint(1) NOT NULL DEFAULT '1',
  `achievements_version` int(11) NOT NULL DEFAULT '0',
  `allowed` tinyint(1) NOT NULL DEFAULT '1',
  `latest_activity` int(10) NOT NULL DEFAULT '0',
  `silence_end` int(11) NOT NULL DEFAULT '0',
  `silence_reason` varchar(127) NOT NULL DEFAULT '',
  `notes` varchar(127) NOT NULL DEFAULT '',
  `ban_datetime` int(11) NOT NULL DEFAULT '0',
  `password_version` tinyint(4) NOT NULL DEFAULT '1',
  `privileges` int(11) NOT NULL,
  `donor_expire` int(11) NOT NULL DEFAULT '0',
  `flags` int(11) NOT NULL DEFAULT '0',
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=latin1;

-- One row per API token. `user` is the owner's id written as text. `token` is the MD5 hex of the
-- secret (the secret itself is never stored). `private` = 1 marks a session token: hanayo writes one at
-- each sign-in, with `privileges` 0, and removes only its cookie at sign-out; the family's API gives such
-- a token every privilege but Bancho, limited by what its owner holds. `description` holds 255
-- characters of latin1. `last_updated` is the last use, in unix seconds. The family indexes nothing here
-- but the primary key.
CREATE TABLE `tokens` (
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `user` varchar(31) NOT NULL,
  `privileges` int(11) NOT NULL,
  `description` varchar(255) NOT NULL,
  `token` varchar(127) NOT NULL,
  `private` tinyint(4) NOT NULL,
  `last_updated` int(11) NOT NULL DEFAULT '0',
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=latin1;
