//! What a DBA does to a running package: upgrades under traffic, installs
//! beside other applications' objects, accounts with least privilege, `status` on a broken install, TLS, crashes,
//! replicas and dumps. The last four boot servers of their own.

mod durability;
mod neighbours;
mod privileges;
mod reinstall_writes;
mod tls;
mod upgrades;
