use super::*;

#[test]
fn pack_round_trip() {
    let mut builder = PackBuilder::default();
    let small = b"tiny".to_vec();
    let big = "line of source code\n".repeat(500).into_bytes();
    for data in [&small, &big] {
        let id = ObjectId::of(data);
        builder.push(encode(id, BlobKind::Data, data).unwrap());
    }
    let (key, bytes, entries) = builder.finish(None).unwrap();
    assert!(key.starts_with("packs/"));
    assert_eq!(read_header(&key, &bytes, None).unwrap().len(), 2);
    assert!(!entries[0].compressed && entries[1].compressed);
    for (entry, data) in entries.iter().zip([&small, &big]) {
        let stored = &bytes[entry.offset as usize..][..entry.length as usize];
        assert_eq!(&decode(&entry.id, stored, entry.compressed, entry.raw_length).unwrap(), data);
    }
}

#[test]
fn a_tree_is_compressed_in_fast_mode_and_decodes_as_any_blob() {
    // A directory's entries: names, modes and sizes between content ids.
    let tree: Vec<u8> = (0..200u32)
        .flat_map(|i| {
            let mut entry = format!("src/module_{i}.rs\0100644\0{}\0", 1000 + i).into_bytes();
            entry.extend(ObjectId::of(&i.to_le_bytes()).0);
            entry
        })
        .collect();
    let id = ObjectId::of(&tree);
    let encoded = encode(id, BlobKind::Tree, &tree).unwrap();
    assert!(
        encoded.compressed && encoded.stored.len() < tree.len(),
        "{} of {}",
        encoded.stored.len(),
        tree.len()
    );
    // Fast mode stores the literals as they are, where level 1 codes them: other bytes.
    assert_eq!(encoded.stored, compress_tree(&tree).unwrap());
    assert_ne!(encoded.stored, compress(&tree).unwrap());
    assert_eq!(decode(&id, &encoded.stored, true, encoded.raw_length).unwrap(), tree);
}

#[test]
fn a_pack_with_a_frame_has_the_framed_header_and_its_damage_drops_the_members_it_hits() {
    let whole = b"a blob stored on its own".to_vec();
    let members: Vec<Vec<u8>> =
        (0..4).map(|i| format!("let value_{i} = {i};\n").repeat(40).into_bytes()).collect();
    let mut frame = super::super::frame::FrameBuilder::default();
    for m in &members {
        frame.add(ObjectId::of(m), m);
    }
    let mut builder = PackBuilder::default();
    builder.push(encode(ObjectId::of(&whole), BlobKind::Data, &whole).unwrap());
    frame.close().unwrap().push_into(&mut builder);
    let (key, mut bytes, entries) = builder.finish(None).unwrap();
    assert_eq!(&bytes[bytes.len() - 8..], FRAMED_MAGIC);
    assert_eq!(read_header(&key, &bytes, None).unwrap(), entries);
    assert_eq!(verify_header(&key, &bytes, None).unwrap(), entries);
    let (sound, damaged) = sort_sound(&bytes, entries.clone(), None);
    assert_eq!((sound.len(), damaged.len()), (5, 0));
    assert_eq!(entries.iter().filter(|e| e.within.is_some()).count(), 4);

    // A frame that does not decode takes every member with it, and only them; a flipped
    // byte inside it takes the members whose bytes it changed.
    let frame_at = entries[1].offset as usize;
    let mut inside = bytes.clone();
    inside[frame_at + entries[1].length as usize / 2] ^= 0x55;
    let (sound, damaged) = sort_sound(&inside, entries.clone(), None);
    assert!(sound.iter().any(|e| e.id == ObjectId::of(&whole)) && !damaged.is_empty());
    assert!(damaged.iter().all(|e| e.within.is_some()));
    bytes[frame_at] ^= 0x55;
    let (sound, damaged) = sort_sound(&bytes, entries, None);
    assert_eq!(sound.iter().map(|e| e.id).collect::<Vec<_>>(), [ObjectId::of(&whole)]);
    assert_eq!(damaged.len(), 4);

    // A pack without a frame keeps the first header form, byte for byte.
    let mut plain = PackBuilder::default();
    plain.push(encode(ObjectId::of(&whole), BlobKind::Data, &whole).unwrap());
    let (_, bytes, entries) = plain.finish(None).unwrap();
    assert_eq!(&bytes[bytes.len() - 8..], MAGIC);
    let header_len = u32::from_le_bytes(bytes[bytes.len() - 12..bytes.len() - 8].try_into().unwrap());
    let header = &bytes[bytes.len() - 12 - header_len as usize..bytes.len() - 12];
    let first_form = postcard::to_allocvec(&vec![WholeEntry::from(&entries[0])]).unwrap();
    assert_eq!(header, &first_form[..]);
}

#[test]
fn a_flipped_byte_fails_the_hash_check() {
    let data = b"some bytes".to_vec();
    let id = ObjectId::of(&data);
    let mut stored = data.clone();
    stored[0] ^= 1;
    assert!(decode(&id, &stored, false, data.len() as u32).is_err());
}
