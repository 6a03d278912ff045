//! Moving a moment's name: `save A B --name x --force` gives `x` to the new moment and takes it
//! from the one that held it. The moment records are write-once objects, so the old record
//! still carries the name; the rule that settles it everywhere (this catalog, a rebuild from
//! the objects, another machine catching up) is that the newest moment holding a name keeps
//! it, and an older one is kept without it.

use super::Moment;
use crate::error::Result;
use crate::store::Store;

impl Store {
    /// Commits `moment`, first taking its name from the moment of its session that holds it.
    /// When the commit fails the name goes back, so a failed save leaves the old moment named.
    pub(crate) fn commit_moment_taking_name(&self, moment: &Moment) -> Result<()> {
        let Some(holder) = self.moment_holding_name(moment)? else { return self.commit_moment(moment) };
        self.set_moment_name(&holder, None)?;
        let committed = self.commit_moment(moment);
        if committed.is_err() {
            let _ = self.set_moment_name(&holder, holder.name.as_deref());
        }
        committed
    }

    /// Adds the moment record `moment` to the catalog under the newest-keeps-the-name rule
    /// (see the module's header); false when the catalog already had it or refused it.
    pub(crate) fn insert_moment_record(&self, moment: &Moment) -> Result<bool> {
        if self.catalog.has_moment(moment.id)? {
            return Ok(false);
        }
        match self.moment_holding_name(moment)? {
            Some(holder) if holder.id < moment.id => {
                self.set_moment_name(&holder, None)?;
                Ok(self.catalog.insert_moment(moment).is_ok())
            }
            Some(_) => {
                let unnamed = Moment { name: None, ..moment.clone() };
                Ok(self.catalog.insert_moment(&unnamed).is_ok())
            }
            None => Ok(self.catalog.insert_moment(moment).is_ok()),
        }
    }

    /// The other moment of `moment`'s session that holds its name, if any.
    fn moment_holding_name(&self, moment: &Moment) -> Result<Option<Moment>> {
        let Some(name) = &moment.name else { return Ok(None) };
        Ok(self
            .catalog
            .list_moments(moment.session)?
            .into_iter()
            .find(|m| m.id != moment.id && m.name.as_deref() == Some(name)))
    }

    fn set_moment_name(&self, moment: &Moment, name: Option<&str>) -> Result<()> {
        self.catalog.conn().execute(
            "UPDATE moments SET name = ?1 WHERE id = ?2",
            rusqlite::params![name, moment.id.to_string()],
        )?;
        Ok(())
    }
}
