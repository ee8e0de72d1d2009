// Only `prisma dev` loads this package; this project runs its own embedded database instead.
throw new Error('prisma dev is not used by this project: npm start runs the embedded database.');
