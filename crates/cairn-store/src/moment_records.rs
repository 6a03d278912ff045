//! Moving a moment's name: `save A B --name x --force` gives `x` to the new moment and takes it
//! from the one that held it. The moment records are write-once objects, so the old record
//! still carries the name; the rule that settles it everywhere (this catalog, a rebuild from
//! the objects, another machine catching up) is that the newest moment holding a name keeps
//! it, and an older one is kept without it. A moment exists once its catalog row is committed;
//! before that its record object (`moments/<id>.json`) is written, so a catalog rebuilt from
//! the objects gets it back.

use crate::Store;
use crate::error::{Error, Result};
use crate::model::moment::Moment;

impl Store {
    /// Writes the moment's record object, then commits its catalog row.
    pub fn commit_moment(&self, moment: &Moment) -> Result<()> {
        let bytes = serde_json::to_vec(moment)
            .map_err(|e| Error::corrupt(format!("could not encode the moment record: {e}")))?;
        self.backend().put_if_absent(&format!("moments/{}.json", moment.id), &bytes)?;
        self.catalog.insert_moment(moment)
    }

    /// Adds every moment record object the catalog lacks whose parts it still holds (after
    /// a repair rebuilt the catalog from the objects); returns how many.
    pub fn add_moment_records(&self) -> Result<u64> {
        let mut added = 0;
        for key in self.backend().list("moments/")? {
            let Ok(bytes) = self.backend().get(&key) else { continue };
            let Ok(moment) = serde_json::from_slice::<Moment>(&bytes) else { continue };
            if self.insert_moment_record(&moment)? {
                added += 1;
            }
        }
        Ok(added)
    }

    /// Adds a moment record another machine (or a copy) wrote to a shared store, unless the
    /// catalog has it. A record that does not decode is left out, as a rebuild from the objects
    /// leaves it out; of two moments holding one name, the newer keeps it (see `names.rs`).
    pub fn add_moment_record(&self, bytes: &[u8]) -> Result<()> {
        let Ok(moment) = serde_json::from_slice::<Moment>(bytes) else { return Ok(()) };
        self.insert_moment_record(&moment)?;
        Ok(())
    }

    /// Commits `moment`, first taking its name from the moment of its session that holds it.
    /// When the commit fails the name goes back, so a failed save leaves the old moment named.
    pub fn commit_moment_taking_name(&self, moment: &Moment) -> Result<()> {
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
    pub fn insert_moment_record(&self, moment: &Moment) -> Result<bool> {
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
