# only a comment

   
